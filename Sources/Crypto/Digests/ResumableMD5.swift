import Glibc

/// RFC 1321 MD5 whose whole state (chaining values, length, buffered partial block) can be saved and resumed.
///
/// For hashes that must survive between requests and instances (a resumable upload's running `md5Hash`, kept in
/// an upstream record). OpenSSL's EVP contexts cannot be exported, so this is a small pure-Swift MD5; `MD5`
/// (OpenSSL) stays the one to use for a hash computed within one stream. Never for security.
public struct ResumableMD5: Sendable, Equatable {
    private var h: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)
    public private(set) var byteCount: UInt64 = 0
    private var buffer: [UInt8] = []

    public init() {}

    public static func == (a: ResumableMD5, b: ResumableMD5) -> Bool { a.state == b.state }

    private static let shifts: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]
    private static let constants: [UInt32] = (0..<64).map {
        UInt32(truncatingIfNeeded: Int64(fabs(sin(Double($0 + 1))) * 4_294_967_296))
    }

    public mutating func update(_ bytes: [UInt8]) {
        byteCount += UInt64(bytes.count)
        var index = 0
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, bytes.count)
            buffer += bytes[0..<take]
            index = take
            guard buffer.count == 64 else { return }
            buffer.withUnsafeBytes { compress($0.baseAddress!) }
            buffer.removeAll(keepingCapacity: true)
        }
        bytes.withUnsafeBytes { raw in
            while bytes.count - index >= 64 {
                compress(raw.baseAddress! + index)
                index += 64
            }
        }
        if index < bytes.count { buffer += bytes[index...] }
    }

    public func finalized() -> [UInt8] {
        var copy = self
        let bits = byteCount &* 8
        var padding: [UInt8] = [0x80]
        let used = (buffer.count + 1) % 64
        padding += [UInt8](repeating: 0, count: used <= 56 ? 56 - used : 120 - used)
        padding += (0..<8).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) }
        copy.update(padding)
        return [copy.h.0, copy.h.1, copy.h.2, copy.h.3].flatMap { word in
            (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) }
        }
    }

    /// 16 bytes of chaining values, 8 of length, then the buffered bytes (< 64), all little-endian.
    public var state: [UInt8] {
        let words = [h.0, h.1, h.2, h.3].flatMap { word in
            (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) }
        }
        return words + (0..<8).map { UInt8(truncatingIfNeeded: byteCount >> (8 * UInt64($0))) } + buffer
    }

    public init?(state: [UInt8]) {
        guard state.count >= 24, state.count < 24 + 64 else { return nil }
        func word(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(state[at + $1]) << (8 * UInt32($1)) } }
        h = (word(0), word(4), word(8), word(12))
        byteCount = (0..<8).reduce(0) { $0 | UInt64(state[16 + $1]) << (8 * UInt64($1)) }
        buffer = Array(state[24...])
        guard byteCount % 64 == UInt64(buffer.count) else { return nil }
    }

    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { m in
            for i in 0..<16 { m[i] = UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
            compress(words: UnsafeBufferPointer(m))
        }
    }

    private mutating func compress(words m: UnsafeBufferPointer<UInt32>) {
        var (a, b, c, d) = h
        for i in 0..<64 {
            var f: UInt32
            let g: Int
            switch i {
            case 0..<16: f = (b & c) | (~b & d); g = i
            case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
            case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
            default: f = c ^ (b | ~d); g = (7 * i) % 16
            }
            f = f &+ a &+ Self.constants[i] &+ m[g]
            a = d
            d = c
            c = b
            let s = Self.shifts[(i / 16) * 4 + i % 4]
            b = b &+ ((f << s) | (f >> (32 - s)))
        }
        h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d)
    }
}
