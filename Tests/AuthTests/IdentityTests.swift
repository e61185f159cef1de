import Crypto
import PortcullisCore
import Testing

@testable import Auth

/// Key ids, issuers, audiences and claim names are byte strings: a canonically equivalent spelling (here U+212A
/// KELVIN SIGN for "K", and "e" + U+0301 for "é") is a different value, never a match.
@Suite struct AuthIdentityTests {
    static let kelvin = "\u{212A}"

    static func verify(_ token: String, keys: KeySet, configuration: AuthConfiguration = testConfiguration)
        throws(AuthError) -> VerifiedToken
    {
        try TokenVerifier(configuration: configuration).verify(Array(token.utf8), keys: keys, now: .now())
    }

    static func reason(_ body: () throws(AuthError) -> VerifiedToken) -> AuthFailureReason? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.reason
        }
    }

    static func jwks(_ kids: [(pem: String, kid: String)]) throws -> KeySet {
        let document: JSONValue = .object(["keys": .array(kids.map { TestKeys.jwk(publicPEM: $0.pem, kid: $0.kid) })])
        return try KeySet.parse(document: Array(document.encoded().utf8))
    }

    /// A token naming kid "\u{212A}" does not select the key whose kid is "K".
    @Test func keyIDIsMatchedByBytes() throws {
        let keys = try Self.jwks([(TestKeys.shared.rsaPublic, "K")])
        let exact = TokenFactory.rsa(kid: "K", payload: TokenFactory.claims())
        #expect(try Self.verify(exact, keys: keys).principal.uid == "user-1")
        let equivalent = TokenFactory.rsa(kid: Self.kelvin, payload: TokenFactory.claims())
        #expect(Self.reason { () throws(AuthError) in try Self.verify(equivalent, keys: keys) } == .unknownKey)
    }

    /// Two keys whose kids are canonically equivalent are two keys, each verifying its own tokens.
    @Test func equivalentKeyIDsAreDistinctKeys() throws {
        let keys = try Self.jwks([(TestKeys.shared.rsaPublic, "K"), (TestKeys.shared.rsa2Public, Self.kelvin)])
        #expect(keys.keys.count == 2 && keys.skipped.isEmpty, "\(keys.skipped)")
        let second = TokenFactory.rsa(TestKeys.shared.rsa2Private, kid: Self.kelvin, payload: TokenFactory.claims())
        #expect(try Self.verify(second, keys: keys).principal.uid == "user-1")
        let crossed = TokenFactory.rsa(TestKeys.shared.rsa2Private, kid: "K", payload: TokenFactory.claims())
        #expect(Self.reason { () throws(AuthError) in try Self.verify(crossed, keys: keys) } == .badSignature)
    }

    @Test func issuerAndAudienceAreMatchedByBytes() throws {
        let keys = try Self.jwks([(TestKeys.shared.rsaPublic, "rsa-1")])
        let configuration = AuthConfiguration(issuer: "https://issuer.test/K", audience: "caf\u{E9}")
        func token(issuer: String, audience: JSONValue) -> String {
            var claims = TokenFactory.claims(issuer: issuer)
            claims["aud"] = audience
            return TokenFactory.rsa(kid: "rsa-1", payload: claims)
        }
        let good = token(issuer: "https://issuer.test/K", audience: .string("caf\u{E9}"))
        #expect(try Self.verify(good, keys: keys, configuration: configuration).principal.uid == "user-1")
        let inList = token(issuer: "https://issuer.test/K", audience: .array([.string("x"), .string("caf\u{E9}")]))
        #expect(try Self.verify(inList, keys: keys, configuration: configuration).principal.uid == "user-1")
        for (bad, expected) in [
            (
                token(issuer: "https://issuer.test/\(Self.kelvin)", audience: .string("caf\u{E9}")),
                AuthFailureReason.wrongIssuer
            ),
            (token(issuer: "https://issuer.test/K", audience: .string("cafe\u{301}")), .wrongAudience),
            (token(issuer: "https://issuer.test/K", audience: .array([.string("cafe\u{301}")])), .wrongAudience),
        ] {
            #expect(
                Self.reason { () throws(AuthError) in try Self.verify(bad, keys: keys, configuration: configuration) }
                    == expected)
        }
    }

    /// A payload whose claim names differ only by Unicode normalization is ambiguous (which one would
    /// `request.auth.token['café']` read?): refused as malformed, although its signature is valid.
    @Test func claimsWithEquivalentNamesAreRefused() throws {
        let keys = try Self.jwks([(TestKeys.shared.rsaPublic, "rsa-1")])
        let now = Timestamp.now().secondsSinceEpoch
        let payload =
            #"{"sub":"u","iss":"https://issuer.test","aud":"portcullis-test","iat":\#(now - 10),"exp":\#(now + 600),"#
            + #""caf\u00e9":"reader","cafe\u0301":"admin"}"#
        let header = TokenFactory.segment(["alg": "RS256", "kid": "rsa-1", "typ": "JWT"])
        let input = header + "." + Base64URL.encode(Array(payload.utf8))
        let signature = try PrivateKey(pem: TestKeys.shared.rsaPrivate).sign(Array(input.utf8), algorithm: .rs256)
        let token = input + "." + Base64URL.encode(signature)
        #expect(Self.reason { () throws(AuthError) in try Self.verify(token, keys: keys) } == .malformed)
    }
}
