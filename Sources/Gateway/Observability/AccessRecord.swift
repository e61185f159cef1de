public import PortcullisCore
public import Service
import Synchronization

/// One request's access-log record, filled while the request is handled and read when its log line and metrics
/// are written (the exchange's completion). The pipeline creates it and writes the route; the surface writes
/// what the wire named (bucket, object, range); the service reports its decisions through `RequestRecording`.
/// Writers may run on different tasks of one request, so the fields sit behind one lock.
public final class AccessRecord: RequestRecording {
    /// The fields as one consistent value: what the log line is written from, read under one lock.
    public struct Fields: Sendable {
        public var routeTemplate: String?
        public var bucket: String?
        public var objectName: String?
        public var principalUID: String?
        public var decision: AccessDecision?
        public var range: String?
        public var upstreamNanos: UInt64 = 0
    }

    public let requestID: String
    /// The request's place in its trace: the caller's `traceparent` when valid, else a trace started here
    /// (`Tracer.beginRequest`). Its `spanID` is the request span's when the trace is recorded.
    public let trace: Trace
    /// The permit of the event loop the request arrived on, passed on to the service (`RequestContext`).
    public let inPlacePermit: (any InPlaceLookupPermit)?
    private let fields = Mutex(Fields())

    /// A record; without `trace` the request starts an unrecorded trace of its own (tests, tools).
    public init(requestID: String, trace: Trace? = nil, inPlacePermit: (any InPlaceLookupPermit)? = nil) {
        self.requestID = requestID
        self.trace = trace ?? Trace(context: TraceIDs.newTrace(sampled: false), recorder: nil)
        self.inPlacePermit = inPlacePermit
    }

    /// The W3C trace id (32 hex digits) the access-log line carries.
    public var traceID: String { trace.context.traceIDHex }

    /// What the service is handed with each call this request makes: this record, the loop's permit and the
    /// trace.
    public var serviceContext: RequestContext {
        RequestContext(record: self, inPlacePermit: inPlacePermit, trace: trace)
    }

    /// The route template the router matched (the metrics label, e.g. `/v0/b/{bucket}/o/{object}`); nil until
    /// the request is routed.
    public var routeTemplate: String? {
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
    public var decision: AccessDecision? {
        get { fields.withLock { $0.decision } }
        set { fields.withLock { $0.decision = newValue } }
    }
    /// The served byte range as `start-end`, when one was.
    public var range: String? {
        get { fields.withLock { $0.range } }
        set { fields.withLock { $0.range = newValue } }
    }
    /// Every field at once, for the completion that writes the log line (one lock, not one per field).
    public var snapshot: Fields { fields.withLock { $0 } }
    public func addUpstreamTime(nanos: UInt64) { fields.withLock { $0.upstreamNanos += nanos } }
    /// Time spent waiting on upstream storage, summed.
    public var upstreamNanos: UInt64 { fields.withLock { $0.upstreamNanos } }
}
