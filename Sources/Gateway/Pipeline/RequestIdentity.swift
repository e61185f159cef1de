import Synchronization

/// Request ids (`X-Request-Id`) and W3C trace ids (`traceparent`).
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

    /// The trace id (32 lower-case hex digits) of a valid version-00 `traceparent`, else nil.
    /// Format: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`; all-zero ids are invalid.
    public static func traceID(fromTraceparent value: String?) -> String? {
        guard let value else { return nil }
        let bytes = Array(value.utf8)
        guard bytes.count >= 55, bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"),
            bytes[52] == UInt8(ascii: "-")
        else { return nil }
        func isHex(_ range: Range<Int>) -> Bool {
            bytes[range].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
        guard isHex(0..<2), bytes[0..<2] != [0x66, 0x66], isHex(3..<35), isHex(36..<52), isHex(53..<55) else {
            return nil
        }
        if bytes[0..<2] == [0x30, 0x30], bytes.count != 55 { return nil }
        guard bytes[3..<35].contains(where: { $0 != 0x30 }), bytes[36..<52].contains(where: { $0 != 0x30 }) else {
            return nil
        }
        return String(decoding: bytes[3..<35], as: UTF8.self)
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
