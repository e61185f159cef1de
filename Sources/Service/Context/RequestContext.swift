public import PortcullisCore
import Synchronization

/// Per-request facts gathered while a request is handled, read when its access-log line and metrics are
/// written. The pipeline creates it; the surface writes its route template; the service writes the access
/// decision, the object it resolved and the time spent waiting on storage.
public final class RequestContext: Sendable {
    private struct Fields {
        var routeTemplate = "unmatched"
        var bucket: String?
        var objectName: String?
        var principalUID: String?
        var decision: AccessDecision?
        var range: String?
        var upstreamNanos: UInt64 = 0
    }

    public let requestID: String
    /// W3C trace id from `traceparent`, when the caller sent a valid one.
    public let traceID: String?
    /// The permit of the HTTP event loop the request arrived on (nil outside a server): the service hands it to a
    /// backend that can answer a point lookup in place (`InPlaceReads`); it applies only while the request
    /// still runs on that loop's thread.
    public let inPlacePermit: (any InPlaceLookupPermit)?
    private let fields = Mutex(Fields())

    public init(requestID: String, traceID: String? = nil, inPlacePermit: (any InPlaceLookupPermit)? = nil) {
        self.requestID = requestID
        self.traceID = traceID
        self.inPlacePermit = inPlacePermit
    }

    /// The route template used as the metrics label, e.g. `/v0/b/{bucket}/o/{object}`.
    public var routeTemplate: String {
        get { fields.withLock { $0.routeTemplate } }
        set { fields.withLock { $0.routeTemplate = newValue } }
    }
    public var bucket: String? {
        get { fields.withLock { $0.bucket } }
        set { fields.withLock { $0.bucket = newValue } }
    }
    public var objectName: String? {
        get { fields.withLock { $0.objectName } }
        set { fields.withLock { $0.objectName = newValue } }
    }
    public var principalUID: String? {
        get { fields.withLock { $0.principalUID } }
        set { fields.withLock { $0.principalUID = newValue } }
    }
    /// How access was decided; nil when the request ended before a decision was needed.
    public var decision: AccessDecision? {
        get { fields.withLock { $0.decision } }
        set { fields.withLock { $0.decision = newValue } }
    }
    /// The served byte range as `start-end`, when one was.
    public var range: String? {
        get { fields.withLock { $0.range } }
        set { fields.withLock { $0.range = newValue } }
    }
    /// Time spent waiting on upstream storage, summed.
    public func addUpstreamTime(nanos: UInt64) { fields.withLock { $0.upstreamNanos += nanos } }
    public var upstreamNanos: UInt64 { fields.withLock { $0.upstreamNanos } }
}

/// How a request was let through or refused, as the access log records it.
public enum AccessDecision: String, Sendable, Equatable {
    /// The rules allowed it.
    case allow
    /// The rules denied it.
    case deny
    /// A capability the caller presented decided: a download token, a signed URL or a resumable upload URL.
    case token
    /// The admin key: rules bypassed.
    case admin
}
