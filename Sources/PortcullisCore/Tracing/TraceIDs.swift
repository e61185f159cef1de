import Synchronization

/// Fresh trace and span ids without a system call per request.
///
/// Each id is SplitMix64 of a per-process random seed plus a counter: SplitMix64's finaliser is a bijection of
/// 64-bit values, so the ids of one process never repeat within 2^64 draws, and they are spread uniformly
/// enough for the samplers that read the trace id's low bits. Different processes start from independent
/// random seeds. Not a secret: ids are visible in headers and logs and need only be unique.
public enum TraceIDs {
    private static let seed: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()
    private static let counter = Atomic<UInt64>(0)

    /// A new non-zero 64-bit id (a span id, or half a trace id).
    public static func next() -> UInt64 {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let id = mix(seed &+ n &* 0x9E37_79B9_7F4A_7C15)
        return id == 0 ? 1 : id
    }

    /// A new trace position: a fresh trace id and a fresh span id, with the given sampled flag.
    public static func newTrace(sampled: Bool) -> TraceContext {
        TraceContext(traceIDHigh: next(), traceIDLow: next(), spanID: next(), sampled: sampled)
    }

    /// SplitMix64's finaliser.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
