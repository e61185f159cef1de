import Crypto
import Testing

@Suite struct Base64Tests {
    /// RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test(arguments: vectors)
    func rfc4648(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        let url = encoded.replacingOccurrences(of: "=", with: "")
        #expect(Base64URL.encode(Array(plain.utf8)) == url)
        #expect(Base64URL.decode(url) == Array(plain.utf8))
    }

    @Test func alphabetsDiffer() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64URL.encode(bytes) == "-_-_")
        #expect(Base64URL.decode("-_-_") == bytes)
        #expect(Base64.decode("+/+/") == bytes)
    }

    @Test(arguments: [
        "Zg", "Zg=", "Zm9v\n", " Zm9v", "Zm9", "Zh==", "Zm9=", "Zm9vY===", "Z===", "====", "Zg==Zg==",
        "Zm-v", "Zm_v", "Zm9v!A==", "=Zg=",
    ])
    func strictBase64RejectsGarbage(text: String) {
        #expect(Base64.decode(text) == nil, "\(text)")
    }

    @Test(arguments: ["Zg==", "Zm8=", "Z", "Zh", "Zm9", "Zm+v", "Zm/v", "Zm9v\n", "Zm 9v", "Zm9vY", "Zm.9"])
    func strictBase64URLRejectsGarbage(text: String) {
        #expect(Base64URL.decode(text) == nil, "\(text)")
    }

    @Test func roundTripRandom() {
        for length in 0..<70 {
            let data = pseudoRandomBytes(length, seed: UInt64(length) + 1)
            #expect(Base64.decode(Base64.encode(data)) == data)
            #expect(Base64URL.decode(Base64URL.encode(data)) == data)
        }
    }

    @Test func randomAndUUID() throws {
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        #expect(a.count == 32 && a != b)
        #expect(SecureRandom.bytes(0).isEmpty)
        let uuid = SecureRandom.uuidString()
        let parts = uuid.split(separator: "-")
        #expect(parts.map(\.count) == [8, 4, 4, 4, 12])
        #expect(parts[2].first == "4")
        #expect("89ab".contains(try #require(parts[3].first)))
        #expect(uuid == uuid.lowercased())
        #expect(SecureRandom.uuidString() != uuid)
    }
}
