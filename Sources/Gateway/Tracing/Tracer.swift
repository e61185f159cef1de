public import PortcullisCore

/// The process's tracing policy: how requests join or start traces and whether their spans are recorded.
///
/// Off (`Tracer.off`, no `--otlp-endpoint`): a request with a valid `traceparent` keeps it — the same trace
/// id and the caller's span as the parent of every upstream call, its flags and `tracestate` unchanged — and a
/// request without one gets a fresh trace id (unsampled) for its access-log line and upstream calls. No span
/// is built. On: sampled requests (parent-based, `TraceSampler`) get a server span whose id becomes the parent
/// in what they send upstream; unsampled ones behave as when off.
public struct Tracer: TraceRoots {
    public let sampler: TraceSampler
    /// Where spans go; nil when nothing is exported.
    public let recorder: (any SpanRecorder)?

    public init(sampler: TraceSampler, recorder: (any SpanRecorder)?) {
        self.sampler = sampler
        self.recorder = recorder
    }

    /// No export: propagation and trace ids only.
    public static let off = Tracer(sampler: TraceSampler(ratio: 0), recorder: nil)

    /// A request's place in a trace, from its `traceparent`/`tracestate` headers: the trace to hand down (its
    /// `spanID` is the request span's when recorded, else the caller's) and the remote parent span id (0 when
    /// the trace starts here).
    public func beginRequest(traceparent: String?, tracestate: String?) -> (trace: Trace, remoteParent: UInt64) {
        let incoming = TraceContext(traceparent: traceparent, tracestate: tracestate)
        guard let recorder else {
            if let incoming { return (Trace(context: incoming, recorder: nil), incoming.spanID) }
            return (Trace(context: TraceIDs.newTrace(sampled: false), recorder: nil), 0)
        }
        if let incoming {
            guard incoming.sampled else { return (Trace(context: incoming, recorder: nil), incoming.spanID) }
            return (Trace(context: incoming.child(TraceIDs.next()), recorder: recorder), incoming.spanID)
        }
        var context = TraceIDs.newTrace(sampled: false)
        context.sampled = sampler.samples(traceIDLow: context.traceIDLow)
        return (Trace(context: context, recorder: context.sampled ? recorder : nil), 0)
    }

    public func newTrace() -> Trace {
        var context = TraceIDs.newTrace(sampled: false)
        context.sampled = recorder != nil && sampler.samples(traceIDLow: context.traceIDLow)
        return Trace(context: context, recorder: context.sampled ? recorder : nil)
    }
}
