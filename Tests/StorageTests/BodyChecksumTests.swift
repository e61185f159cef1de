import Testing

@testable import Storage

/// The object checksums as the embedded backend computes them (Crypto's MD5/CRC32C behind `BodyChecksum`),
/// against references computed outside Swift; the digests must not depend on how the bytes are split.
@Suite struct BodyChecksumTests {
    @Test func knownValues() {
        var checksum = BodyChecksum()
        checksum.update(Array("hello world".utf8))
        let result = checksum.finish()
        #expect(result.md5Base64 == "XrY7u+Ae7tCTyyK7j1rNww==")
        #expect(result.crc32cBase64 == "yZRlqg==")
        #expect(BodyChecksum().finish().md5Base64 == "1B2M2Y8AsgTpgAmY7PhCfg==")
        #expect(BodyChecksum().finish().crc32cBase64 == "AAAAAA==")
    }

    /// Reference values from Python's hashlib and a bitwise CRC32C over the same pseudo-random bytes.
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
}
