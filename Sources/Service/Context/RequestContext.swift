public import PortcullisCore

/// Where the service reports what it decided about a request while handling it: how access was decided, the
/// object it resolved, who the caller turned out to be, time spent waiting on storage. The service only writes
/// these facts; whoever handed it the request owns the record and reads it afterwards (in a server, the
/// gateway's access-log line and metrics). A reference, so facts written deep in a call reach the owner.
public protocol RequestRecording: AnyObject, Sendable {
    /// How access was decided; nil until a decision was needed.
    var decision: AccessDecision? { get set }
    /// The object the request resolved to, when it differs from what the wire named (a resumable session's).
    var objectName: String? { get set }
    /// The uid of the caller, when a capability (not a bearer token) identified it.
    var principalUID: String? { get set }
    /// Adds time spent waiting on upstream storage.
    func addUpstreamTime(nanos: UInt64)
}

/// What the service needs to know about the request it is handling, besides the operation's own arguments.
public struct RequestContext: Sendable {
    /// Where decisions are reported.
    public let record: any RequestRecording
    /// The permit of the HTTP event loop the request arrived on (nil outside a server): the service hands it to a
    /// backend that can answer a point lookup in place (`InPlaceReads`); it applies only while the request
    /// still runs on that loop's thread.
    public let inPlacePermit: (any InPlaceLookupPermit)?
    /// The request's place in its trace (nil outside a traced server): the service records its rules-decision
    /// and storage spans under it, and binds upstream backends to it (`UpstreamTraced`) so that every call
    /// they make carries `traceparent` and records its attempt spans. The request span is the parent of all
    /// of them.
    public let trace: Trace?

    public init(
        record: any RequestRecording, inPlacePermit: (any InPlaceLookupPermit)? = nil, trace: Trace? = nil
    ) {
        self.record = record
        self.inPlacePermit = inPlacePermit
        self.trace = trace
    }
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
