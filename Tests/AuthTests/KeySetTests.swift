import Crypto
import PortcullisCore
import Testing

@testable import Auth

@Suite struct KeySetTests {
    @Test func jwksWithRSAAndECKeysAndSkippedEntries() throws {
        let keys = TestKeys.shared
        let document: JSONValue = [
            "keys": [
                TestKeys.jwk(publicPEM: keys.rsaPublic, kid: "r", alg: "RS256"),
                TestKeys.jwk(publicPEM: keys.ecPublic, kid: "e"),
                TestKeys.jwk(publicPEM: keys.ec384Public, kid: "e384"),
                TestKeys.jwk(publicPEM: keys.rsa2Public, kid: "r"),  // duplicate kid
                ["kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"],
                ["kty": "oct", "kid": "sym", "k": "c2VjcmV0"],
                ["kty": "RSA", "kid": "bad-n", "n": "!!", "e": "AQAB"],
                ["kty": "EC", "kid": "bad-curve", "crv": "P-521", "x": "AA", "y": "AA"],
                TestKeys.jwk(publicPEM: keys.rsa2Public, kid: "hs", alg: "HS256"),  // an HMAC alg on a public key
                TestKeys.jwk(publicPEM: keys.ecPublic, kid: "mismatch", alg: "RS256"),
                ["kid": "no-kty"],
                "not an object",
            ]
        ]
        let set = try KeySet.parse(document: Array(document.encoded().utf8))
        #expect(set.keys.map(\.keyID) == ["r", "e", "e384"])
        #expect(set.key(id: "r")?.allowedAlgorithms == [.rs256])
        #expect(set.key(id: "e")?.allowedAlgorithms == [.es256])
        #expect(set.key(id: "e384")?.allowedAlgorithms == [.es384])
        #expect(set.skipped.count == 9)
        if case .publicKey(let key)? = set.key(id: "r")?.material {
            #expect(key.pem == (try PublicKey(pem: keys.rsaPublic)).pem)
        }
    }

    @Test(arguments: [
        "", "garbage", "{}", "{\"keys\": []}", "{\"keys\": {}}", "[1,2]", "{\"kid\": 5}",
        "{\"kid\": \"-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\\n\"}",
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        "-----BEGIN PUBLIC KEY-----\nAAAA\n",
    ])
    func unusableDocumentsAreErrors(document: String) {
        do {
            let set = try KeySet.parse(document: Array(document.utf8))
            Issue.record("accepted \(set.keys.count) keys")
        } catch {
            #expect(error.reason == .noKeys)
        }
    }

    @Test func privateKeysAreNotAcceptedAsVerificationKeys() {
        // Someone pointing --jwt-keys at a private key gets a clear error rather than a silently derived key.
        #expect(throws: AuthError.self) { try KeySet.parse(document: Array(TestKeys.shared.rsaPrivate.utf8)) }
    }

    @Test func certificateMapKeepsKids() throws {
        let map: JSONValue = .object([
            "b": .string(TestKeys.shared.rsaCertificate), "a": .string(TestKeys.shared.rsaCertificate),
        ])
        let set = try KeySet.parse(document: Array(map.encoded().utf8))
        #expect(set.keys.map(\.keyID) == ["a", "b"])
        #expect(set.keys[0].allowedAlgorithms == [.rs256, .rs384, .rs512])
        #expect(set.keys[0].fingerprint != set.keys[1].fingerprint)
    }
}
