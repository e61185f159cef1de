import Testing

@testable import Gateway

@Suite struct ConfigurationSecretFilesTests {
    @Test func keyedLinesFirstSigns() throws {
        let file = "# rotation\nk2:\(String(repeating: "A", count: 43))=\n\nk1:MDEyMzQ1Njc4OWFiY2RlZg==\n"
        let keys = try SecretFiles.signingKeys(from: Array(file.utf8))
        #expect(keys.map(\.id) == ["k2", "k1"])
        #expect(keys[0].secret == [UInt8](repeating: 0, count: 32))
        #expect(keys[1].secret == Array("0123456789abcdef".utf8))
    }

    @Test func anythingElseIsOneRawSecret() throws {
        let keys = try SecretFiles.signingKeys(from: Array("a long raw secret value\n".utf8))
        #expect(keys.count == 1)
        #expect(keys[0].secret == Array("a long raw secret value".utf8))
        #expect(keys[0].id.count == 8 && keys[0].id == SecretFiles.rawKeyID(keys[0].secret))
        // sha256("abc") = ba7816bf...
        #expect(SecretFiles.rawKeyID(Array("abc".utf8)) == "ba7816bf")
        let binary: [UInt8] = (0..<32).map { UInt8($0 * 7 & 0xFF) } + [0xFF, 0xFE]
        #expect(try SecretFiles.signingKeys(from: binary)[0].secret == binary)
    }

    @Test func weakOrBrokenKeysAreRefused() {
        #expect(throws: ConfigurationError.self) { try SecretFiles.signingKeys(from: Array("short".utf8)) }
        #expect(throws: ConfigurationError.self) { try SecretFiles.signingKeys(from: Array("k:c2hvcnQ=\n".utf8)) }
        #expect(throws: ConfigurationError.self) {
            try SecretFiles.signingKeys(from: Array("k:MDEyMzQ1Njc4OWFiY2RlZg==\nk:MDEyMzQ1Njc4OWFiY2RlZg==".utf8))
        }
        #expect(throws: ConfigurationError.self) {
            try SecretFiles.secret(from: Array(" \n".utf8), option: .adminKey, path: "x")
        }
    }

    @Test func randomKeysDiffer() {
        #expect(SecretFiles.randomSigningKey() != SecretFiles.randomSigningKey())
        #expect(SecretFiles.randomSigningKey().secret.count == 32)
    }

    @Test func secretsAreTrimmed() throws {
        #expect(
            try SecretFiles.secret(from: Array("  admin-key-123\n".utf8), option: .adminKey, path: "x")
                == Array("admin-key-123".utf8))
    }
}
