internal import CCRC32C

/// Streaming CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum GCS reports as `crc32c`.
///
/// Uses the SSE4.2 `crc32` instruction when the CPU has it (checked once), else slicing-by-8 tables.
/// `update` never allocates. Check value: `CRC32C.hash("123456789".utf8) == 0xE3069283`.
public struct CRC32C: Sendable {
    /// The running register, pre-inverted (so a fresh state is all ones).
    private var state: UInt32 = 0xFFFF_FFFF

    public init() {}

    /// Continues from a finished checksum (e.g. resuming an upload whose CRC so far was persisted).
    public init(resumingFrom checksum: UInt32) { state = ~checksum }

    @inline(__always)
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if CRC32CTables.hardware {
            state = pc_crc32c_sse42(state, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        } else {
            state = CRC32CTables.software(state, base, bytes.count)
        }
    }

    public mutating func update(_ bytes: some Sequence<UInt8>) { bytes.withBytes { update($0) } }

    public func finalize() -> UInt32 { ~state }

    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.finalize()
    }

    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt32 { bytes.withBytes { hash($0) } }

    /// Whether `update` uses the CPU's `crc32` instruction (SSE4.2, detected once with CPUID) rather than the
    /// slicing-by-8 tables.
    public static var usesHardware: Bool { CRC32CTables.hardware }

    /// The table-driven path regardless of the CPU (exposed so tests can check both paths agree).
    public static func softwareHash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return 0 }
        return ~CRC32CTables.software(0xFFFF_FFFF, base, bytes.count)
    }
}

enum CRC32CTables {
    static let hardware: Bool = pc_cpu_has_sse42() != 0

    /// 8 × 256 entries: table k maps a byte to its CRC contribution k bytes further along.
    static let slices: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k * 256 + i] = (t[(k - 1) * 256 + i] >> 8) ^ t[Int(t[(k - 1) * 256 + i] & 0xFF)] }
        }
        return t
    }()

    /// Slicing-by-8 over `count` bytes at `base`, from and to a pre-inverted register.
    static func software(_ crc: UInt32, _ base: UnsafeRawPointer, _ count: Int) -> UInt32 {
        slices.withUnsafeBufferPointer { t in
            var c = crc
            var p = base
            var n = count
            while n >= 8 {
                let word = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
                let lo = UInt32(truncatingIfNeeded: word) ^ c
                let hi = UInt32(truncatingIfNeeded: word >> 32)
                c =
                    t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                c = (c >> 8) ^ t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
                p += 1
                n -= 1
            }
            return c
        }
    }
}
