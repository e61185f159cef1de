import Crypto
import PortcullisCore
import Testing

@testable import Auth

/// The attack corpus: every case is refused with the right reason class, by both signature engines,
/// and no token text reaches the logs.
@Suite struct AttackCorpusTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let header: String
        let reason: AuthFailureReason
        var testDescription: String { name }
    }

    static let hmacSecret = Array("test-only-hmac-secret-0123456789".utf8)

    static func corpus() -> [Case] {
        let keys = TestKeys.shared
        let now = Timestamp.now().secondsSinceEpoch
        let valid = TokenFactory.rsa(kid: "rsa-1", payload: TokenFactory.claims(now: now))
        let parts = valid.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func bearer(_ token: String) -> String { "Bearer \(token)" }
        func rsa(_ claims: [String: JSONValue], kid: String? = "rsa-1") -> String {
            bearer(TokenFactory.rsa(kid: kid, payload: claims))
        }
        var claims = TokenFactory.claims(now: now)
        func without(_ key: String) -> [String: JSONValue] { var c = claims; c.removeValue(forKey: key); return c }
        func with(_ key: String, _ value: JSONValue) -> [String: JSONValue] { var c = claims; c[key] = value; return c }
        let tamperedPayload = TokenFactory.segment(.object(with("sub", "admin")))
        var tamperedSignature = Base64URL.decode(parts[2])!
        tamperedSignature[17] ^= 0x01
        let noneHeader = TokenFactory.segment(["alg": "none", "typ": "JWT"])
        let noneHeaderKid = TokenFactory.segment(["alg": "none", "kid": "rsa-1"])
        // Algorithm confusion: HS256 "signed" with the RSA public key's PEM bytes (libjwt would accept it).
        let confused = TokenFactory.hmac(Array(keys.rsaPublic.utf8), kid: "rsa-1", payload: claims)
        let confusedNoKid = TokenFactory.hmac(Array(keys.rsaPublic.utf8), payload: claims)
        // RS256 token presented to the EC key's kid.
        let rsToEC = TokenFactory.rsa(kid: "ec-1", payload: claims)
        // ES256 signed by the P-256 key but claiming the RSA kid.
        let esToRSA = try! TokenFactory.token(header: ["alg": "ES256", "kid": "rsa-1"], payload: claims) {
            try PrivateKey(pem: keys.ecPrivate).sign(Array($0.utf8), algorithm: .es256)
        }
        let otherKey = TokenFactory.rsa(keys.rsa2Private, kid: "rsa-1", payload: claims)
        let huge = TokenFactory.rsa(kid: "rsa-1", payload: with("pad", .string(String(repeating: "x", count: 17_000))))
        claims = TokenFactory.claims(now: now)
        return [
            Case(name: "expired", header: rsa(with("exp", .int(now - 61))), reason: .expired),
            Case(name: "exp as string", header: rsa(with("exp", "9999999999")), reason: .malformed),
            Case(name: "missing exp", header: rsa(without("exp")), reason: .malformed),
            Case(name: "nbf in the future", header: rsa(with("nbf", .int(now + 120))), reason: .notYetValid),
            Case(
                name: "iat in the future beyond leeway", header: rsa(with("iat", .int(now + 120))),
                reason: .issuedInFuture),
            Case(name: "wrong iss", header: rsa(with("iss", "https://evil.test")), reason: .wrongIssuer),
            Case(name: "missing iss", header: rsa(without("iss")), reason: .wrongIssuer),
            Case(name: "wrong aud", header: rsa(with("aud", "other")), reason: .wrongAudience),
            Case(name: "wrong aud array", header: rsa(with("aud", ["a", "b"])), reason: .wrongAudience),
            Case(name: "missing sub", header: rsa(without("sub")), reason: .badSubject),
            Case(name: "empty sub", header: rsa(with("sub", "")), reason: .badSubject),
            Case(name: "numeric sub", header: rsa(with("sub", 42)), reason: .badSubject),
            Case(
                name: "sub over 128 chars", header: rsa(with("sub", .string(String(repeating: "u", count: 129)))),
                reason: .badSubject),
            Case(
                name: "tampered payload", header: bearer(parts[0] + "." + tamperedPayload + "." + parts[2]),
                reason: .badSignature),
            Case(
                name: "tampered signature",
                header: bearer(parts[0] + "." + parts[1] + "." + Base64URL.encode(tamperedSignature)),
                reason: .badSignature),
            Case(name: "signature from another key", header: bearer(otherKey), reason: .badSignature),
            Case(
                name: "alg none without signature", header: bearer(noneHeader + "." + parts[1] + "."),
                reason: .algorithmNotAllowed),
            Case(
                name: "alg none with signature", header: bearer(noneHeaderKid + "." + parts[1] + "." + parts[2]),
                reason: .algorithmNotAllowed),
            Case(
                name: "alg None (case variant)",
                header: bearer(TokenFactory.segment(["alg": "None"]) + "." + parts[1] + "." + parts[2]),
                reason: .algorithmNotAllowed),
            Case(
                name: "HS256 keyed with the RSA public PEM (kid)", header: bearer(confused),
                reason: .algorithmNotAllowed),
            Case(
                name: "HS256 keyed with the RSA public PEM (no kid)", header: bearer(confusedNoKid),
                reason: .algorithmNotAllowed),
            Case(name: "RS256 presented to an EC key", header: bearer(rsToEC), reason: .algorithmNotAllowed),
            Case(name: "ES256 presented to an RSA key", header: bearer(esToRSA), reason: .algorithmNotAllowed),
            Case(
                name: "PS256",
                header: bearer(
                    TokenFactory.segment(["alg": "PS256", "kid": "rsa-1"]) + "." + parts[1] + "." + parts[2]),
                reason: .algorithmNotAllowed),
            Case(name: "unknown kid", header: rsa(claims, kid: "nope"), reason: .unknownKey),
            Case(name: "no kid with a JWKS", header: rsa(claims, kid: nil), reason: .unknownKey),
            // Cut inside the payload (half the whole token lands in the signature when the claims are short).
            Case(
                name: "truncated token", header: bearer(String(valid.prefix(parts[0].count + 1 + parts[1].count / 2))),
                reason: .malformed),
            Case(
                name: "truncated signature (impossible base64url length)", header: bearer(String(valid.dropLast(1))),
                reason: .malformed),
            Case(name: "non-base64 header", header: bearer("eyJ!!!." + parts[1] + "." + parts[2]), reason: .malformed),
            Case(name: "non-base64 payload", header: bearer(parts[0] + ".a*b." + parts[2]), reason: .malformed),
            Case(
                name: "non-base64 signature", header: bearer(parts[0] + "." + parts[1] + ".sig+/=="), reason: .malformed
            ),
            Case(
                name: "padded segments", header: bearer(parts[0] + "=." + parts[1] + "." + parts[2]), reason: .malformed
            ),
            Case(
                name: "header not JSON",
                header: bearer(Base64URL.encode(Array("hello".utf8)) + "." + parts[1] + "." + parts[2]),
                reason: .malformed),
            Case(
                name: "payload not an object",
                header: bearer(parts[0] + "." + Base64URL.encode(Array("[1]".utf8)) + "." + parts[2]),
                reason: .badSignature),
            Case(name: "2 segments", header: bearer(parts[0] + "." + parts[1]), reason: .malformed),
            Case(name: "4 segments", header: bearer(valid + "." + parts[2]), reason: .malformed),
            Case(name: "1 segment", header: bearer(parts[1]), reason: .malformed),
            Case(name: "oversize token", header: bearer(huge), reason: .oversize),
            Case(name: "empty bearer", header: "Bearer", reason: .malformed),
            Case(name: "empty bearer with space", header: "Bearer   ", reason: .malformed),
            Case(name: "empty firebase", header: "Firebase ", reason: .malformed),
            Case(name: "basic scheme", header: "Basic dXNlcjpwYXNz", reason: .unsupportedScheme),
            Case(name: "token without scheme", header: valid, reason: .unsupportedScheme),
            Case(
                name: "typ not JWT",
                header: bearer(
                    TokenFactory.segment(["alg": "RS256", "kid": "rsa-1", "typ": "JWE"]) + "." + parts[1] + "."
                        + parts[2]), reason: .malformed),
            Case(
                name: "crit header",
                header: bearer(
                    TokenFactory.segment(["alg": "RS256", "kid": "rsa-1", "crit": ["exp"]]) + "." + parts[1] + "."
                        + parts[2]), reason: .malformed),
            Case(
                name: "HS256 without a configured secret",
                header: bearer(TokenFactory.hmac(hmacSecret, payload: claims)), reason: .algorithmNotAllowed),
        ]
    }

    static func keySet() throws -> KeySet {
        let keys = TestKeys.shared
        let jwks: JSONValue = [
            "keys": [
                TestKeys.jwk(publicPEM: keys.rsaPublic, kid: "rsa-1"),
                TestKeys.jwk(publicPEM: keys.ecPublic, kid: "ec-1"),
            ]
        ]
        return try KeySet.parse(document: Array(jwks.encoded().utf8))
    }

    @Test(arguments: SignatureEngine.allCases)
    func everyCaseIsRejectedWithItsReason(engine: SignatureEngine) async throws {
        let sink = CapturingLogSink()
        var configuration = testConfiguration
        configuration.signatureEngine = engine
        let metrics = MetricsRegistry()
        let auth = Authenticator(
            configuration: configuration, keySource: .fixed(try Self.keySet()), metrics: metrics,
            logger: Logger(sink: sink, minimumLevel: .debug))
        let cases = Self.corpus()
        for c in cases {
            do {
                let principal = try await auth.authenticate(authorization: c.header)
                Issue.record("\(c.name): accepted as \(String(describing: principal?.uid))")
            } catch {
                #expect(error.reason == c.reason, "\(c.name): \(error)")
                #expect(error.wwwAuthenticate.hasPrefix("Bearer error="))
            }
        }
        // Every case was counted under its reason.
        let exposition = metrics.render()
        for reason in Set(cases.map(\.reason)) {
            let count = cases.filter { $0.reason == reason }.count
            #expect(
                exposition.contains("portcullis_auth_failures_total{reason=\"\(reason.rawValue)\"} \(count)\n"),
                "\(reason)")
        }
        // No token text in the logs: no header value and no token segment longer than 8 characters.
        let log = sink.lines.joined(separator: "\n")
        #expect(!sink.lines.isEmpty)
        for c in cases {
            let credential = c.header.split(separator: " ").last.map(String.init) ?? c.header
            for segment in credential.split(separator: ".") where segment.count > 8 {
                #expect(!log.contains(segment), "\(c.name): token text in the log")
            }
        }
    }

    @Test func confusionIsRefusedEvenWithAnHMACSecretConfigured() async throws {
        // With a real HMAC secret configured, a token keyed with the public PEM still fails (bad signature).
        var configuration = testConfiguration
        configuration.hmacSecret = Self.hmacSecret
        let auth = Authenticator(
            configuration: configuration, keySource: .fixed(try Self.keySet()),
            metrics: MetricsRegistry(), logger: .disabled)
        let confused = TokenFactory.hmac(
            Array(TestKeys.shared.rsaPublic.utf8), kid: "rsa-1", payload: TokenFactory.claims())
        await #expect(throws: AuthError(.badSignature, "signature does not verify")) {
            try await auth.authenticate(authorization: "Bearer \(confused)")
        }
    }

    @Test func noKeysLoaded() async {
        let auth = Authenticator(
            configuration: testConfiguration, keySource: nil, metrics: MetricsRegistry(), logger: .disabled)
        let token = TokenFactory.rsa(kid: "rsa-1", payload: TokenFactory.claims())
        do {
            _ = try await auth.authenticate(authorization: "Bearer \(token)")
            Issue.record("accepted without keys")
        } catch {
            #expect(error.reason == .noKeys)
        }
    }

    @Test func wwwAuthenticateText() {
        let error = AuthError(.expired, "token \"expired\"")
        #expect(error.wwwAuthenticate == "Bearer error=\"invalid_token\", error_description=\"expired: token expired\"")
        #expect(AuthError(.unsupportedScheme, "x").wwwAuthenticate.hasPrefix("Bearer error=\"invalid_request\""))
    }
}
