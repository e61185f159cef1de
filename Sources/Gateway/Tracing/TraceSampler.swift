public import PortcullisCore

/// Parent-based ratio sampling (OpenTelemetry's `ParentBased(TraceIdRatioBased(ratio))`): a request that
/// arrives with a `traceparent` follows the caller's sampled flag; a trace we start is sampled when the low
/// 64 bits of its trace id fall below `ratio × 2^64`, so every instance makes the same decision for a trace id.
public struct TraceSampler: Sendable, Equatable {
    public let ratio: Double
    private let threshold: UInt64
    private let always: Bool

    /// `ratio` in 0...1 (clamped).
    public init(ratio: Double) {
        let r = min(max(ratio.isNaN ? 0 : ratio, 0), 1)
        self.ratio = r
        always = r >= 1
        threshold = always ? .max : UInt64(r * 18_446_744_073_709_551_616.0)
    }

    /// Whether a trace we start with this id is sampled.
    public func samples(traceIDLow: UInt64) -> Bool {
        // identity-ok: a trace id's low half compared as a number, against the sampling threshold
        always || traceIDLow < threshold
    }

    /// The decision for a request: the caller's flag when it sent a context, else the ratio on `new`'s id.
    public func decide(incoming: TraceContext?, new: TraceContext) -> Bool {
        if let incoming { return incoming.sampled }
        return samples(traceIDLow: new.traceIDLow)
    }
}
