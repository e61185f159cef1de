public import HTTPServer
public import PortcullisCore
public import Storage

/// The Firebase Storage v0 API (v0.md §5 plus the gateway extensions of DESIGN §7), end to end: routing,
/// authorization, storage calls, wire encoding, CORS and error mapping.
///
/// The platform's outer responder authenticates the caller and hands each `/v0/` request to `handle`, which
/// never throws: every failure becomes a protocol error response through `GatewayError`.
public final class V0API: Sendable {
    let configuration: V0Configuration
    let backends: [String: any StorageBackend]
    let signer: CapabilitySigner
    let currentAuthorizer: @Sendable () -> any Authorizer
    let logger: Logger
    let router: V0Router
    let cors: CORSPolicy
    let rulesDecisions: CounterFamily

    /// The granularity announced to resumable clients (v0 §5.9 [REC]: the SDKs' 256 KiB).
    public static let chunkGranularity = 262_144

    public init(configuration: V0Configuration, backends: [String: any StorageBackend], signer: CapabilitySigner,
                authorizer: @escaping @Sendable () -> any Authorizer, metrics: MetricsRegistry, logger: Logger) {
        self.configuration = configuration
        self.backends = backends
        self.signer = signer
        self.currentAuthorizer = authorizer
        self.logger = logger
        self.router = V0Router(buckets: Set(backends.keys))
        self.cors = CORSPolicy(origins: configuration.corsOrigins)
        self.rulesDecisions = metrics.counter(
            "portcullis_rules_decisions_total", help: "Access decisions by rules method and outcome.",
            labels: ["method", "decision"])
    }

    /// Whether this request is for the v0 API (path `/v0` or under `/v0/`).
    public func matches(_ request: HTTPRequest) -> Bool { V0Router.matches(request) }

    /// Handles one v0 request end to end. `principal` is nil for anonymous callers; `Principal.isAdmin` bypasses
    /// rules. Fills `context` (route template, bucket, object, decision, range). Never throws.
    public func handle(_ request: HTTPRequest, principal: Principal?, context: RequestContext) async -> HTTPResponse {
        var response: HTTPResponse
        if request.method == .options {
            context.routeTemplate = V0Router.template(for: request)
            let methods = context.routeTemplate == V0Router.collectionTemplate ? V0Router.collectionMethods
                : V0Router.objectMethods
            do {
                try router.validateTarget(request)
                response = cors.preflight(request, methods: methods)
            } catch {
                response = error.response(requestID: context.requestID)
            }
        } else {
            do {
                let routed = try router.route(request)
                context.routeTemplate = routed.routeTemplate
                context.bucket = routed.operation.bucket
                context.objectName = routed.operation.objectName
                let call = V0Call(request: request, routed: routed, principal: principal, context: context)
                response = try await perform(call)
                if routed.isHead { Self.stripForHead(&response) }
            } catch {
                if context.routeTemplate == "unmatched" { context.routeTemplate = V0Router.template(for: request) }
                let gatewayError = GatewayError(any: error)
                if gatewayError.status >= 500 {
                    logger.error("v0 request failed", [("requestId", .string(context.requestID)),
                                                       ("status", .int(Int64(gatewayError.status))),
                                                       ("error", .string("\(error)"))])
                }
                response = gatewayError.response(requestID: context.requestID)
                if request.method == .head { Self.stripForHead(&response) }
            }
        }
        cors.decorate(&response, for: request)
        return response
    }

    private func perform(_ call: V0Call) async throws -> HTTPResponse {
        switch call.routed.operation {
        case .getMetadata(let object): return try await getMetadata(call, object)
        case .download(let object): return try await download(call, object)
        case .downloadURL(let object): return try await downloadURL(call, object)
        case .list(let bucket): return try await list(call, bucket: bucket)
        case .updateMetadata(let object): return try await updateMetadata(call, object)
        case .delete(let object): return try await delete(call, object)
        case .uploadMedia(let object): return try await uploadMedia(call, object)
        case .uploadMultipart(let bucket, let name, let boundary):
            return try await uploadMultipart(call, bucket: bucket, name: name, boundary: boundary)
        case .resumableStart(let bucket, let name): return try await resumableStart(call, bucket: bucket, name: name)
        case .resumableContinue(let bucket, let uploadID):
            return try await resumableContinue(call, bucket: bucket, uploadID: uploadID)
        case .createToken(let object): return try await manageToken(call, object, delete: nil)
        case .deleteToken(let object, let token): return try await manageToken(call, object, delete: token)
        case .signURL(let object): return try await signURL(call, object)
        }
    }

    /// A HEAD answer: no body, but the `Content-Length` the GET would have (RFC 9110 §9.3.2), not 0.
    static func stripForHead(_ response: inout HTTPResponse) {
        if case .bytes(let bytes) = response.body, !response.headers.contains("Content-Length") {
            response.headers.add("Content-Length", String(bytes.count))
        }
        response.body = .empty
    }

    func backend(_ bucket: String) throws(GatewayError) -> any StorageBackend {
        guard let backend = backends[bucket] else { throw .notFound("Bucket \(bucket) not found.") }
        return backend
    }
}

/// One request in flight: what every handler needs besides the API's own state.
struct V0Call: Sendable {
    let request: HTTPRequest
    let routed: RoutedRequest
    let principal: Principal?
    let context: RequestContext

    var query: QueryParameters { routed.query }
    var headers: HTTPHeaders { request.headers }
}
