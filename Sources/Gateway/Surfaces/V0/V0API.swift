import HTTPServer
public import PortcullisCore
public import Service

/// The Firebase Storage v0 surface (README.md, "What it serves"; openapi/portcullis.yaml): a codec between the
/// v0 wire format and the `StorageService`.
///
/// It routes (`V0Router`), decodes what the request asks into typed service calls, and encodes what they
/// return — metadata JSON, byte streams, list pages, upload statuses — and failures in the v0 error shape. It
/// decides nothing about access, existence or preconditions: the service does, before anything is revealed.
public final class V0API: APISurface {
    let service: StorageService
    let configuration: V0Configuration
    let logger: Logger
    public let traits = SurfaceTraits(
        errorShape: V0ErrorShape(), prefixes: ["/v0"], notFoundMessage: "Not Found.",
        corsRequestHeaders: CORSPolicy.firebaseRequestHeaders, corsExposedHeaders: CORSPolicy.firebaseExposedHeaders,
        loggableQueryKeys: AccessLog.storageQueryKeys)

    /// The granularity announced to resumable clients (the SDKs' 256 KiB).
    public static let chunkGranularity = 262_144

    public init(service: StorageService, configuration: V0Configuration = V0Configuration(), logger: Logger) {
        self.service = service
        self.configuration = configuration
        self.logger = logger
    }

    /// The v0 table (`V0Router.table`), each route decoding into a `RoutedRequest` and performing it.
    public var routes: [Route<RouteHandler>] {
        V0Router.table.map { route in
            let decode = route.handler
            return Route(route.methods, route.template, checkTarget: { [service] in try V0Router.check($0, service) }) {
                [self] matched in await serve(matched, decode)
            }
        }
    }

    /// Handles one v0 request end to end. `principal` is nil for anonymous callers. Never throws.
    private func serve(_ matched: MatchedRequest, _ decode: V0Router.Decoder) async -> HTTPResponse {
        let record = matched.record
        do {
            let routed = try V0Router.decode(matched.request, matched.match, decode)
            record.bucket = routed.operation.bucket
            record.objectName = routed.operation.objectName
            let call = V0Call(
                request: matched.request, routed: routed, principal: matched.principal, record: record,
                context: record.serviceContext)
            return try await perform(call)
        } catch {
            return failureResponse(for: error, record: record, logger: logger)
        }
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
}

/// One request in flight: what every handler needs besides the API's own state.
struct V0Call: Sendable {
    let request: HTTPRequest
    let routed: RoutedRequest
    let principal: Principal?
    /// The access-log record; the surface writes what the wire named.
    let record: AccessRecord
    /// What the service is handed (`record.serviceContext`, made once).
    let context: RequestContext

    var query: QueryParameters { routed.query }
    var headers: HTTPHeaders { request.headers }

    /// The caller as the service sees it: the principal plus the capabilities the query presents
    /// (`?token=`, `?signature=`).
    var caller: Caller { Caller(principal: principal, downloadToken: query["token"], signature: query["signature"]) }
}
