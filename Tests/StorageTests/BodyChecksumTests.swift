import Testing
@testable import Storage

/// MD5 (RFC 1321 test suite) and CRC32C (RFC 3720 check value) as the embedded backend computes them.
@Suite struct BodyChecksumTests {
    static func md5Hex(_ text: String) -> String {
        var digest = MD5Digest()
        Array(text.utf8).withUnsafeBytes { digest.update($0) }
        return digest.finish().map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func md5Vectors(_ input: String, _ expected: String) {
        #expect(Self.md5Hex(input) == expected)
    }

    @Test func crc32cCheckValue() {
        var crc = CRC32CDigest()
        Array("123456789".utf8).withUnsafeBytes { crc.update($0) }
        #expect(crc.value == 0xE306_9283)
    }

    /// Reference values from Python's hashlib and a bitwise CRC32C over the same pseudo-random bytes; the
    /// digest must not depend on how the bytes are split into updates.
    @Test(arguments: [1, 7, 63, 64, 65, 4096, 100_000])
    func splitUpdatesMatchReference(_ piece: Int) {
        let bytes = testBytes(100_000, seed: 42)
        var checksum = BodyChecksum()
        var index = 0
        while index < bytes.count {
            let end = min(bytes.count, index + piece)
            checksum.update(Array(bytes[index..<end]))
            index = end
        }
        let result = checksum.finish()
        #expect(result.md5Base64 == "fyRMUpm0y1fvtjgvKWJxkA==")
        #expect(result.crc32c == 0x742E_36ED)
        #expect(result.size == 100_000)
    }

    @Test func base64() {
        #expect(Base64.encode([]) == "")
        #expect(Base64.encode(Array("f".utf8)) == "Zg==")
        #expect(Base64.encode(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
    }
}
