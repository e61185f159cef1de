import HTTPServer
import PortcullisCore
import Service

@testable import Gateway

extension APISurface {
    /// One request through this surface's route table alone — no authentication, CORS or access log — with the
    /// route's label written on `record` as the gateway writes it: what a test of a surface's codec needs.
    func handle(_ request: HTTPRequest, principal: Principal?, record: AccessRecord) async -> HTTPResponse {
        let router: GatewayRouter
        do { router = try GatewayRouter(surfaces: [self]) } catch { preconditionFailure("\(error)") }
        let decision =
            request.method == .options
            ? router.options(path: request.path) : router.decide(request.method, path: request.path)
        switch decision {
        case .route(let label, _, let handler, let match):
            record.routeTemplate = label
            return await handler(MatchedRequest(request: request, match: match, principal: principal, record: record))
        case .methodNotAllowed(let label, let traits, let allow, _):
            record.routeTemplate = label
            return traits.errorShape.response(for: .methodNotAllowed(allow: allow), requestID: record.requestID)
        case .notFound(let label, let traits):
            record.routeTemplate = label
            return (traits?.errorShape ?? PlainErrorShape()).response(
                for: .notFound(traits?.notFoundMessage ?? "No such route."), requestID: record.requestID)
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
