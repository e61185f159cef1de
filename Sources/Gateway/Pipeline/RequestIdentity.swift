import Synchronization

/// Request ids (`X-Request-Id`). Trace ids come from `Tracer.beginRequest` (`traceparent`).
///
/// A caller's id is kept when it is sane — 1 to 128 characters of `[A-Za-z0-9._-]` — so a request can be
/// followed across a proxy; otherwise a fresh one is generated: a random per-process prefix plus a counter
/// (unique across instances, no system call per request).
public enum RequestIdentity {
    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        return hex(value, digits: 12)
    }()
    private static let counter = Atomic<UInt64>(0)

    /// The caller's id if sane, else nil.
    public static func sanitized(_ candidate: String?) -> String? {
        guard let candidate, !candidate.isEmpty, candidate.utf8.count <= 128 else { return nil }
        for byte in candidate.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default: return nil
            }
        }
        return candidate
    }

    /// A new 20-character id.
    public static func generate() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + hex(n, digits: 8)
    }

    /// The low `digits` hex digits of `value`, zero-padded (no intermediate Strings: one per request).
    private static func hex(_ value: UInt64, digits: Int) -> String {
        String(unsafeUninitializedCapacity: digits) { buffer in
            var v = value
            for i in stride(from: digits - 1, through: 0, by: -1) {
                let nibble = UInt8(truncatingIfNeeded: v & 0xF)
                buffer[i] = nibble < 10 ? 48 + nibble : 87 + nibble
                v >>= 4
            }
            return digits
        }
    }
}
