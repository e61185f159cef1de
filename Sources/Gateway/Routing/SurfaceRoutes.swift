public import HTTPServer
public import PortcullisCore
public import Service

/// A request the gateway's router matched to a route of a surface, authenticated, with its captures.
public struct MatchedRequest: Sendable {
    public let request: HTTPRequest
    public let match: RouteMatch
    public let principal: Principal?
    public let record: AccessRecord

    /// What the service is handed for this request (`AccessRecord.serviceContext`).
    public var context: RequestContext { record.serviceContext }
}

/// What a surface does with a matched request. It never throws: a failure is rendered in the surface's error
/// shape (`APISurface.failureResponse`).
public typealias RouteHandler = @Sendable (MatchedRequest) async -> HTTPResponse

/// What a surface declares once for all its routes; the pipeline reads it and never names the surface. A
/// reference, made once per surface: every request's routing decision carries it.
public final class SurfaceTraits: Sendable {
    /// How the surface's errors look — also for requests under its prefixes that match no route.
    public let errorShape: any ErrorShape
    /// Path prefixes the surface answers for (a request under one that matches no route gets the surface's 404
    /// with `notFoundMessage`, labelled `prefix + "/unmatched"`). Empty: only its routes.
    public let prefixes: [String]
    public let notFoundMessage: String
    /// Request headers a browser may send (CORS preflight `Access-Control-Allow-Headers`).
    public let corsRequestHeaders: [String]
    /// Response headers a browser script may read (`Access-Control-Expose-Headers`).
    public let corsExposedHeaders: [String]
    /// `corsExposedHeaders` as the header value, joined once.
    let corsExposedValue: String
    /// Query keys whose values the access log keeps; every other value is redacted.
    public let loggableQueryKeys: [String]
    /// The same keys as bytes, converted once.
    let loggableKeyBytes: [[UInt8]]
    /// Query keys that gate the surface: when non-empty, its routes answer only requests whose query names one
    /// of them, and for those they are consulted before every other surface's (a path-style surface such as
    /// `/{bucket}/{object...}` then shadows nothing: a request without the key never reaches it).
    public let queryGate: [String]
    /// Also gated: `POST` with a `multipart/form-data` body to a bucket's root (`/{bucket}` or `/{bucket}/`) — a
    /// browser form upload, whose credentials are form fields, not query parameters.
    public let answersFormPosts: Bool
    /// Written before the route template in metrics and access-log labels (`s3:` → `s3:/{bucket}/{key}`), for a
    /// surface whose templates alone would not say which surface served the request.
    public let labelPrefix: String

    public init(
        errorShape: any ErrorShape, prefixes: [String] = [], notFoundMessage: String = "Not Found.",
        corsRequestHeaders: [String] = [], corsExposedHeaders: [String] = [], loggableQueryKeys: [String] = [],
        queryGate: [String] = [], answersFormPosts: Bool = false, labelPrefix: String = ""
    ) {
        self.labelPrefix = labelPrefix
        self.queryGate = queryGate
        self.answersFormPosts = answersFormPosts
        self.errorShape = errorShape
        self.prefixes = prefixes
        self.notFoundMessage = notFoundMessage
        self.corsRequestHeaders = corsRequestHeaders
        self.corsExposedHeaders = corsExposedHeaders
        self.corsExposedValue = corsExposedHeaders.joined(separator: ", ")
        self.loggableQueryKeys = loggableQueryKeys
        self.loggableKeyBytes = loggableQueryKeys.map { Array($0.utf8) }
    }
}

/// One API surface (v0, the Cloud Storage JSON API, the console, …): a codec between its wire format and the
/// `StorageService`, declared as a table of routes. The gateway compiles every surface's table into one router
/// at start-up (`GatewayRouter`); adding a route is one entry in its surface's table, adding a surface is one
/// folder and one registration. A surface never decides access, existence or preconditions (the service does).
public protocol APISurface: Sendable {
    var traits: SurfaceTraits { get }
    /// The surface's routes; read once, when the router is compiled.
    var routes: [Route<RouteHandler>] { get }
}

extension APISurface {
    /// The response for a failure that reached the top of a handler, in this surface's shape; server-side
    /// failures (5xx) are also logged with the request id, so the client's error and the log line meet.
    public func failureResponse(for error: any Error, record: AccessRecord, logger: Logger) -> HTTPResponse {
        let failure = ServiceError(any: error)
        // 501 is a feature the gateway does not serve, not a fault: no error line.
        if failure.status >= 500, failure.kind != .notImplemented {
            logger.error(
                "request failed",
                [
                    ("requestId", .string(record.requestID)),
                    ("route", .string(record.routeTemplate ?? "")),
                    ("status", .int(Int64(failure.status))), ("error", .string("\(error)")),
                ])
        }
        if let resumable = error as? ResumableFailure {
            return traits.errorShape.response(for: resumable, requestID: record.requestID)
        }
        return traits.errorShape.response(for: failure, requestID: record.requestID)
    }
}
