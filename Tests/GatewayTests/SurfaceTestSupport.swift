import HTTPServer
import PortcullisCore
import Service

@testable import Gateway

extension APISurface {
    /// One request through this surface's route table alone — no authentication, CORS or access log — with the
    /// route's label written on `context` as the gateway writes it: what a test of a surface's codec needs.
    func handle(_ request: HTTPRequest, principal: Principal?, context: RequestContext) async -> HTTPResponse {
        let router: GatewayRouter
        do { router = try GatewayRouter(surfaces: [self]) } catch { preconditionFailure("\(error)") }
        let decision =
            request.method == .options
            ? router.options(path: request.path) : router.decide(request.method, path: request.path)
        switch decision {
        case .route(let label, _, let handler, let match):
            context.routeTemplate = label
            return await handler(MatchedRequest(request: request, match: match, principal: principal, context: context))
        case .methodNotAllowed(let label, let traits, let allow, _):
            context.routeTemplate = label
            return traits.errorShape.response(for: .methodNotAllowed(allow: allow), requestID: context.requestID)
        case .notFound(let label, let traits):
            context.routeTemplate = label
            return (traits?.errorShape ?? PlainErrorShape()).response(
                for: .notFound(traits?.notFoundMessage ?? "No such route."), requestID: context.requestID)
        }
    }

    /// Whether this surface's table (or its prefixes) answers `request`.
    func answers(_ request: HTTPRequest) -> Bool {
        let router: GatewayRouter
        do { router = try GatewayRouter(surfaces: [self]) } catch { preconditionFailure("\(error)") }
        if case .notFound(_, nil) = router.decide(request.method, path: request.path) { return false }
        return true
    }
}
