/// What kind of work a span stands for (OTLP `Span.SpanKind`).
public enum SpanKind: Int, Sendable {
    case `internal` = 1
    /// The handling of a request a client sent us.
    case server = 2
    /// A request we sent (one upstream attempt).
    case client = 3
    /// Handing work to a later consumer (an event delivery).
    case producer = 4
}

/// One attribute value (the OTLP `AnyValue` kinds we use).
public enum SpanAttributeValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case double(Double)
}

/// A finished span, as it is exported.
public struct SpanData: Sendable {
    public var name: String
    public var kind: SpanKind
    /// The trace, this span's id (`context.spanID`), the sampled flag and `tracestate`.
    public var context: TraceContext
    /// The parent span's id; 0 for a root span.
    public var parentSpanID: UInt64
    public var startNanos: Int64
    public var endNanos: Int64
    public var attributes: [(String, SpanAttributeValue)]
    /// The error message when the work failed (OTLP status ERROR); nil leaves the status unset.
    public var errorMessage: String?

    public init(
        name: String, kind: SpanKind, context: TraceContext, parentSpanID: UInt64, startNanos: Int64,
        endNanos: Int64 = 0, attributes: [(String, SpanAttributeValue)] = [], errorMessage: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.context = context
        self.parentSpanID = parentSpanID
        self.startNanos = startNanos
        self.endNanos = endNanos
        self.attributes = attributes
        self.errorMessage = errorMessage
    }
}

/// Where finished spans go (the exporter's queue). `record` is called on request paths: it must not block.
public protocol SpanRecorder: Sendable {
    func record(_ span: SpanData)
}

/// What travels with a piece of work: its position in a trace and, when the trace is recorded, where its spans
/// go. Layers hand it down explicitly (the service's `RequestContext.trace`, `UpstreamRequest.trace`), never
/// through task-locals.
///
/// `recorder` is nil when nothing is exported (no endpoint, or the trace is not sampled): then `startSpan`
/// returns nil and no span is built — the context is still propagated, so the trace continues downstream.
public struct Trace: Sendable {
    public var context: TraceContext
    public let recorder: (any SpanRecorder)?

    public init(context: TraceContext, recorder: (any SpanRecorder)?) {
        self.context = context
        self.recorder = recorder
    }

    /// Whether spans of this trace are recorded.
    public var isRecording: Bool { recorder != nil }

    /// A span that is a child of `context.spanID`, started now; nil when the trace is not recorded.
    public func startSpan(_ name: String, kind: SpanKind = .internal) -> Span? {
        guard let recorder else { return nil }
        return Span(name: name, kind: kind, parent: context, recorder: recorder)
    }

    /// The root span of a trace this process started (`TraceRoots.newTrace`): it takes `context.spanID` as its
    /// own id and has no parent. Nil when the trace is not recorded.
    public func startRootSpan(_ name: String, kind: SpanKind = .internal) -> Span? {
        guard let recorder else { return nil }
        return Span(name: name, kind: kind, context: context, parentSpanID: 0, recorder: recorder)
    }
}

/// A span being timed. A value: set attributes, then `end()` exactly once to hand it to the recorder.
public struct Span: Sendable {
    public private(set) var data: SpanData
    private let recorder: any SpanRecorder

    /// A span with a fresh id under `parent` (its `spanID` is the parent's id), started now.
    public init(
        name: String, kind: SpanKind, parent: TraceContext, recorder: any SpanRecorder, id: UInt64 = TraceIDs.next()
    ) {
        data = SpanData(
            name: name, kind: kind, context: parent.child(id), parentSpanID: parent.spanID,
            startNanos: Timestamp.now().nanosecondsSinceEpoch)
        self.recorder = recorder
    }

    /// A root span, or the local root under a remote parent (`parentSpanID` 0 when there is none).
    public init(name: String, kind: SpanKind, context: TraceContext, parentSpanID: UInt64, recorder: any SpanRecorder) {
        data = SpanData(
            name: name, kind: kind, context: context, parentSpanID: parentSpanID,
            startNanos: Timestamp.now().nanosecondsSinceEpoch)
        self.recorder = recorder
    }

    /// The trace position of work done inside this span (children name this span as their parent).
    public var trace: Trace { Trace(context: data.context, recorder: recorder) }

    public mutating func setAttribute(_ key: String, _ value: SpanAttributeValue) {
        data.attributes.append((key, value))
    }

    public mutating func setAttribute(_ key: String, _ value: String) { setAttribute(key, .string(value)) }

    public mutating func setAttribute(_ key: String, _ value: Int) { setAttribute(key, .int(Int64(value))) }

    /// Moves the start to `nanos` (wall clock): for work whose start was taken before the span was built.
    public mutating func setStart(_ nanos: Int64) { data.startNanos = nanos }

    /// Names the span once its name is known (a request's route is known only after routing).
    public mutating func rename(_ name: String) { data.name = name }

    /// Marks the span failed (OTLP status ERROR) with a short message (never a secret).
    public mutating func setError(_ message: String) { data.errorMessage = message }

    /// Ends the span now (or at `endNanos`, wall-clock nanoseconds) and hands it to the recorder.
    public func end(atNanos endNanos: Int64? = nil) {
        var finished = data
        finished.endNanos = endNanos ?? Timestamp.now().nanosecondsSinceEpoch
        recorder.record(finished)
    }
}

/// Starts traces for work that no request carries — key fetches, change-event deliveries — under the same
/// sampling as requests. Implemented by the gateway's `Tracer`.
public protocol TraceRoots: Sendable {
    /// A new trace position (a fresh trace id, not yet a span) and, when sampled, its recorder.
    func newTrace() -> Trace
}
