import Synchronization

/// Request ids (`X-Request-Id`). Trace ids come from `Tracer.beginRequest` (`traceparent`).
///
/// A caller's id is kept when it is sane — 1 to 128 characters of `[A-Za-z0-9._-]` — so a request can be
/// followed across a proxy; otherwise a fresh one is generated: a random per-process prefix plus a counter
/// (unique across instances, no system call per request).
public enum RequestIdentity {
    /// 48 random bits, the first 12 hex digits of every id this process generates.
    private static let prefix: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next() as UInt64) & 0xFFFF_FFFF_FFFF
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

    /// A new 20-character id: the prefix's 12 hex digits, then the counter's low 8, written into the id's own
    /// storage (one allocation per request).
    public static func generate() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return String(unsafeUninitializedCapacity: 20) { buffer in
            writeHex(prefix, into: UnsafeMutableBufferPointer(rebasing: buffer[0..<12]))
            writeHex(n, into: UnsafeMutableBufferPointer(rebasing: buffer[12..<20]))
            return 20
        }
    }

    /// The low `buffer.count` hex digits of `value`, zero-padded, in lower case.
    private static func writeHex(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        var v = value
        for i in stride(from: buffer.count - 1, through: 0, by: -1) {
            let nibble = UInt8(truncatingIfNeeded: v & 0xF)
            buffer[i] = nibble < 10 ? 48 + nibble : 87 + nibble
            v >>= 4
        }
    }
}
