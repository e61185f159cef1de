import Crypto
import Testing

@Suite struct HMACTests {
    /// RFC 4231 test cases 1, 2, 3, 4, 6, 7 (HMAC-SHA-256).
    static let vectors: [(key: String, data: String, mac: String)] = [
        (
            String(repeating: "0b", count: 20), hexOf("Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            hexOf("Jefe"), hexOf("what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            "0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        (
            String(repeating: "aa", count: 131), hexOf("Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            String(repeating: "aa", count: 131),
            hexOf(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
            ),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ]

    static func hexOf(_ s: String) -> String { hex(Array(s.utf8)) }

    @Test(arguments: vectors)
    func rfc4231(key: String, data: String, mac: String) {
        #expect(hex(HMAC.sha256(key: unhex(key), data: unhex(data))) == mac)
        var streaming = HMACSHA256(key: unhex(key))
        for byte in unhex(data) { streaming.update([byte]) }
        #expect(hex(streaming.finalize()) == mac)
    }

    @Test func sha384AndSha512() {
        let key = Array("Jefe".utf8), data = Array("what do ya want for nothing?".utf8)
        #expect(
            hex(HMAC.compute(.sha384, key: key, data: data))
                == "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649")
        #expect(
            hex(HMAC.compute(.sha512, key: key, data: data))
                == "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        )
    }

    /// RFC 2202 test case 2 (HMAC-SHA-1, what V2 signed URLs with an HMAC key use).
    @Test func sha1() {
        let key = Array("Jefe".utf8), data = Array("what do ya want for nothing?".utf8)
        #expect(hex(HMAC.compute(.sha1, key: key, data: data)) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }

    @Test func emptyKeyAndData() {
        // HMAC-SHA256("", "") is a well-known constant.
        #expect(
            hex(HMAC.sha256(key: [UInt8](), data: [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        #expect(HMACSHA256(key: [UInt8]()).finalize() == HMAC.sha256(key: [UInt8](), data: [UInt8]()))
    }

    @Test func constantTimeEquals() {
        #expect(ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!ConstantTime.equals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(ConstantTime.equalDigests(Array("secret".utf8), Array("secret".utf8)))
        #expect(!ConstantTime.equalDigests(Array("secret".utf8), Array("secreT".utf8)))
    }
}
