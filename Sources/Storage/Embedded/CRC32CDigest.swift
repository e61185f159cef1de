/// Incremental CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum GCS reports as `crc32c`.
/// Slicing-by-8 tables: eight bytes per step.
struct CRC32CDigest: Sendable {
    private var crc: UInt32 = 0xFFFF_FFFF

    init() {}

    /// The CRC of every byte seen so far.
    var value: UInt32 { crc ^ 0xFFFF_FFFF }

    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            tables[0][n] = c
        }
        for n in 0..<256 {
            for k in 1..<8 {
                let previous = tables[k - 1][n]
                tables[k][n] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    private static let flat: [UInt32] = tables.flatMap { $0 }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var c = crc
        var index = 0
        let count = bytes.count
        Self.flat.withUnsafeBufferPointer { t in
            while count - index >= 8 {
                let low = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self)) ^ c
                let high = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self))
                c = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                index += 8
            }
            while index < count {
                c = t[Int((c ^ UInt32(bytes[index])) & 0xFF)] ^ (c >> 8)
                index += 1
            }
        }
        crc = c
    }
}
