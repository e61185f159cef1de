import Crypto
import Foundation
import Testing

@Suite struct DigestTests {
    static let sha256Vectors: [(String, String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ]

    @Test(arguments: sha256Vectors)
    func sha256KnownVectors(input: String, expected: String) {
        #expect(hex(SHA256.hash(Array(input.utf8))) == expected)
        var hasher = SHA256()
        for byte in input.utf8 { hasher.update([byte]) }
        #expect(hex(hasher.finalize()) == expected)
    }

    @Test func sha256MillionA() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(chunk) }
        #expect(hex(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    static let md5Vectors: [(String, String)] = [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        (
            "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a"
        ),
    ]

    @Test(arguments: md5Vectors)
    func md5KnownVectors(input: String, expected: String) {
        #expect(hex(MD5.hash(Array(input.utf8))) == expected)
        var hasher = MD5()
        hasher.update(input.utf8)
        #expect(hex(hasher.finalize()) == expected)
    }

    @Test func crc32cCheckValue() {
        #expect(CRC32C.hash(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.hash([UInt8]()) == 0)
        // RFC 3720 B.4 vectors: 32 zero bytes and 32 0xFF bytes.
        #expect(CRC32C.hash([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.hash([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        let ascending = (0..<32).map { UInt8($0) }
        #expect(CRC32C.hash(ascending) == 0x46DD_794E)
    }

    static let crc32cVectors: [([UInt8], UInt32)] = [
        (Array("123456789".utf8), 0xE306_9283),
        ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
        ([], 0),
    ]

    /// The CRC catalogue's check value and RFC 3720 B.4's vectors through the table path and through `hash`
    /// (the `crc32` instruction wherever the CPU has SSE4.2).
    @Test(arguments: crc32cVectors)
    func crc32cKnownVectorsOnBothPaths(_ input: [UInt8], _ expected: UInt32) {
        #expect(input.withUnsafeBytes { CRC32C.softwareHash($0) } == expected)
        #expect(CRC32C.hash(input) == expected)
    }

    /// On a CPU that reports SSE4.2 the instruction is used (so the vectors above exercised it).
    @Test func crc32cUsesTheInstructionWhereTheCPUHasIt() throws {
        #if arch(x86_64) && os(Linux)
        // Read to the end: `String(contentsOfFile:)` stops after the first 4 KiB of a procfs file.
        let data = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/cpuinfo")).readToEnd() ?? Data()
        let cpuinfo = String(decoding: data, as: UTF8.self)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") } ?? ""
        #expect(CRC32C.usesHardware == flags.split(separator: " ").contains("sse4_2"))
        #endif
    }

    @Test func crc32cHardwareAndSoftwareAgree() {
        for length in [0, 1, 7, 8, 9, 31, 32, 33, 100, 4097] {
            let data = pseudoRandomBytes(length, seed: UInt64(length) + 7)
            for offset in 0..<min(length, 8) {
                let slice = Array(data[offset...])
                let software = slice.withUnsafeBytes { CRC32C.softwareHash($0) }
                #expect(CRC32C.hash(slice) == software, "length \(length) offset \(offset)")
            }
        }
    }

    @Test func crc32cResume() {
        let data = pseudoRandomBytes(10_000, seed: 3)
        var first = CRC32C()
        first.update(data[..<4321])
        var resumed = CRC32C(resumingFrom: first.finalize())
        resumed.update(data[4321...])
        #expect(resumed.finalize() == CRC32C.hash(data))
    }

    /// Streaming in random-sized chunks over 1 MiB equals one-shot, for every hasher.
    @Test func streamingEqualsOneShotOnOneMiB() {
        let data = pseudoRandomBytes(1 << 20, seed: 0xC0FFEE)
        var sha = SHA256(), md5 = MD5(), crc = CRC32C(), mac = HMACSHA256(key: Array("k".utf8))
        var offset = 0
        var step: UInt64 = 12345
        while offset < data.count {
            step = step &* 6364136223846793005 &+ 1442695040888963407
            let length = min(Int(step >> 49) % 70_000 + 1, data.count - offset)
            data[offset..<(offset + length)].withUnsafeBytes { chunk in
                sha.update(chunk); md5.update(chunk); crc.update(chunk); mac.update(chunk)
            }
            offset += length
        }
        #expect(sha.finalize() == SHA256.hash(data))
        #expect(md5.finalize() == MD5.hash(data))
        #expect(crc.finalize() == CRC32C.hash(data))
        #expect(crc.finalize() == data.withUnsafeBytes { CRC32C.softwareHash($0) })
        #expect(mac.finalize() == HMAC.sha256(key: Array("k".utf8), data: data))
    }

    @Test func copiesAreIndependent() {
        var a = SHA256()
        a.update(Array("ab".utf8))
        var b = a
        b.update(Array("c".utf8))
        a.update(Array("x".utf8))
        #expect(hex(b.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(a.finalize() == SHA256.hash(Array("abx".utf8)))
        // finalize does not consume: more input continues the same stream.
        b.update([UInt8]())
        #expect(b.finalize() == SHA256.hash(Array("abc".utf8)))
    }
}
