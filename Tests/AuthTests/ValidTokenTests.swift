import Crypto
import PortcullisCore
import Testing

@testable import Auth

@Suite struct ValidTokenTests {
    static let secret = Array("test-only-hmac-secret-0123456789".utf8)

    static func authenticator(
        engine: SignatureEngine, configuration: AuthConfiguration = testConfiguration,
        keys: KeySet? = nil, metrics: MetricsRegistry = MetricsRegistry()
    ) throws -> Authenticator {
        var configuration = configuration
        configuration.signatureEngine = engine
        configuration.hmacSecret = secret
        configuration.adminKey = Array("test-only-admin-key".utf8)
        return Authenticator(
            configuration: configuration, keySource: .fixed(try keys ?? AttackCorpusTests.keySet()),
            metrics: metrics, logger: .disabled)
    }

    @Test(arguments: SignatureEngine.allCases, ["Bearer", "Firebase", "bearer", "FIREBASE"])
    func validTokensAllAlgorithmsBothSchemes(engine: SignatureEngine, scheme: String) async throws {
        let auth = try Self.authenticator(engine: engine)
        let claims = TokenFactory.claims(sub: "alice", extra: ["role": "editor", "n": 3, "groups": ["a", "b"]])
        let rs = TokenFactory.rsa(kid: "rsa-1", payload: claims)
        let es = try TokenFactory.token(header: ["alg": "ES256", "kid": "ec-1", "typ": "JWT"], payload: claims) {
            try PrivateKey(pem: TestKeys.shared.ecPrivate).sign(Array($0.utf8), algorithm: .es256)
        }
        let hs = TokenFactory.hmac(Self.secret, payload: claims)
        let hs512 = TokenFactory.hmac(Self.secret, alg: "HS512", digest: .sha512, payload: claims)
        for token in [rs, es, hs, hs512] {
            let principal = try #require(try await auth.authenticate(authorization: "\(scheme) \(token)"))
            #expect(principal.uid == "alice")
            #expect(!principal.isAdmin)
            #expect(principal.claims["role"] == .string("editor"))
            #expect(principal.claims["groups"] == .array([.string("a"), .string("b")]))
            #expect(principal.claims["aud"] == .string("portcullis-test"))
        }
    }

    /// The header's bytes (a slice of a request head's buffer, as the gateway passes them) verify, hit the
    /// cache and fail exactly as the `String` form does.
    @Test func headerBytesBehaveLikeTheString() async throws {
        let metrics = MetricsRegistry()
        let auth = try Self.authenticator(engine: .openSSL, metrics: metrics)
        let token = TokenFactory.rsa(kid: "rsa-1", payload: TokenFactory.claims(sub: "bob"))
        let head = Array("Host: x\r\nAuthorization: Bearer \(token)\r\n".utf8)
        let start = head.firstIndex(of: UInt8(ascii: "B"))!, end = head.count - 2
        let slice = head[start..<end]
        #expect(try await auth.authenticate(authorizationBytes: slice)?.uid == "bob")
        #expect(try await auth.authenticate(authorizationBytes: slice)?.uid == "bob")
        #expect(try await auth.authenticate(authorization: "Bearer \(token)")?.uid == "bob")
        #expect(metrics.render().contains("portcullis_auth_cache_hits_total 2\n"))
        #expect(try await auth.authenticate(authorizationBytes: ArraySlice<UInt8>?.none) == nil)
        #expect(
            try await auth.authenticate(authorizationBytes: Array("Bearer test-only-admin-key".utf8)[...]) == .admin)
        await #expect(throws: AuthError.self) {
            _ = try await auth.authenticate(authorizationBytes: Array("Basic x".utf8)[...])
        }
    }

    /// `--dev-trust-emulator-owner`: `Bearer owner` is admin only when switched on (in either scheme, like the
    /// admin key).
    @Test func emulatorOwnerIsAdminOnlyWhenTrusted() async throws {
        let off = try Self.authenticator(engine: .openSSL)
        await #expect(throws: AuthError.self) { _ = try await off.authenticate(authorization: "Bearer owner") }
        var configuration = testConfiguration
        configuration.trustsEmulatorOwner = true
        let on = try Self.authenticator(engine: .openSSL, configuration: configuration)
        #expect(try await on.authenticate(authorization: "Bearer owner")?.isAdmin == true)
        #expect(try await on.authenticate(authorization: "Firebase owner")?.isAdmin == true)
        await #expect(throws: AuthError.self) { _ = try await on.authenticate(authorization: "Bearer owners") }
    }

    @Test func anonymousAndAdmin() async throws {
        let auth = try Self.authenticator(engine: .openSSL)
        #expect(try await auth.authenticate(authorization: nil) == nil)
        #expect(try await auth.authenticate(authorization: "") == nil)
        #expect(try await auth.authenticate(authorization: "Bearer test-only-admin-key") == .admin)
        #expect(try await auth.authenticate(authorization: "bearer   test-only-admin-key ") == .admin)
        // Either scheme carries the admin key (pyrebase and its forks send `Firebase`); it must match exactly.
        #expect(try await auth.authenticate(authorization: "Firebase test-only-admin-key") == .admin)
        #expect(try await auth.authenticate(authorization: "FIREBASE\ttest-only-admin-key") == .admin)
        await #expect(throws: AuthError.self) {
            try await auth.authenticate(authorization: "Basic test-only-admin-key")
        }
        await #expect(throws: AuthError.self) {
            try await auth.authenticate(authorization: "Firebase test-only-admin-ke")
        }
        await #expect(throws: AuthError.self) {
            try await auth.authenticate(authorization: "Bearer test-only-admin-ke")
        }
        await #expect(throws: AuthError.self) {
            try await auth.authenticate(authorization: "Bearer test-only-admin-key2")
        }
    }

    @Test func leewayAndAudienceArray() async throws {
        let auth = try Self.authenticator(engine: .openSSL)
        let now = Timestamp.now().secondsSinceEpoch
        var claims = TokenFactory.claims(now: now)
        claims["exp"] = .int(now - 30)  // expired 30 s ago: inside the 60 s leeway
        claims["nbf"] = .int(now + 30)
        claims["iat"] = .double(Double(now) + 30.5)
        claims["aud"] = ["x", "portcullis-test"]
        let token = TokenFactory.rsa(kid: "rsa-1", payload: claims)
        #expect(try await auth.authenticate(authorization: "Bearer \(token)")?.uid == "user-1")
    }

    @Test func pemKeysWithoutKidAndCertificates() async throws {
        let keys = TestKeys.shared
        let document = keys.rsa2Public + "\n" + keys.rsaCertificate + keys.ec384Public
        let set = try KeySet.parse(document: Array(document.utf8))
        #expect(set.keys.count == 3 && set.keys.allSatisfy { $0.keyID == nil })
        let auth = try Self.authenticator(engine: .libJWT, keys: set)
        // Any kid (or none) matches PEM keys; the certificate's key verifies the first RSA key's tokens.
        let t1 = TokenFactory.rsa(kid: "whatever", payload: TokenFactory.claims(sub: "bob"))
        let t2 = TokenFactory.rsa(TestKeys.shared.rsa2Private, alg: .rs512, payload: TokenFactory.claims(sub: "carol"))
        let t3 = try TokenFactory.token(header: ["alg": "ES384"], payload: TokenFactory.claims(sub: "dan")) {
            try PrivateKey(pem: TestKeys.shared.ec384Private).sign(Array($0.utf8), algorithm: .es384)
        }
        #expect(try await auth.authenticate(authorization: "Bearer \(t1)")?.uid == "bob")
        #expect(try await auth.authenticate(authorization: "Bearer \(t2)")?.uid == "carol")
        #expect(try await auth.authenticate(authorization: "Bearer \(t3)")?.uid == "dan")
        // ES256 is not allowed for a P-384 key (and there is no P-256 key here).
        let es256 = try TokenFactory.token(header: ["alg": "ES256"], payload: TokenFactory.claims()) {
            try PrivateKey(pem: TestKeys.shared.ecPrivate).sign(Array($0.utf8), algorithm: .es256)
        }
        await #expect(throws: AuthError(.algorithmNotAllowed, "ES256 is not allowed for the configured keys")) {
            try await auth.authenticate(authorization: "Bearer \(es256)")
        }
    }

    /// Firebase ID tokens: Google's x509 map, issuer/audience from the project, auth_time required.
    @Test(arguments: SignatureEngine.allCases)
    func firebaseProfile(engine: SignatureEngine) async throws {
        var (configuration, url) = AuthConfiguration.firebase(projectID: "demo-project")
        #expect(url == "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com")
        #expect(configuration.issuer == "https://securetoken.google.com/demo-project")
        configuration.signatureEngine = engine
        let map: JSONValue = .object(["kid-a": .string(TestKeys.shared.rsaCertificate)])
        let keys = try KeySet.parse(document: Array(map.encoded().utf8))
        let auth = Authenticator(
            configuration: configuration, keySource: .fixed(keys), metrics: MetricsRegistry(), logger: .disabled)
        let now = Timestamp.now().secondsSinceEpoch
        func firebaseClaims(authTime: Int64?) -> [String: JSONValue] {
            var claims = TokenFactory.claims(
                now: now, sub: "fb-uid-1", issuer: "https://securetoken.google.com/demo-project",
                audience: "demo-project",
                extra: [
                    "user_id": "fb-uid-1", "email": "a@example.test",
                    "firebase": ["sign_in_provider": "password", "identities": ["email": ["a@example.test"]]],
                ])
            if let authTime { claims["auth_time"] = .int(authTime) }
            return claims
        }
        let good = TokenFactory.rsa(kid: "kid-a", payload: firebaseClaims(authTime: now - 100))
        let principal = try #require(try await auth.authenticate(authorization: "Firebase \(good)"))
        #expect(principal.uid == "fb-uid-1")
        #expect(principal.claims["user_id"] == .string("fb-uid-1"))
        #expect(principal.claims["firebase"]?["sign_in_provider"] == .string("password"))
        let future = TokenFactory.rsa(kid: "kid-a", payload: firebaseClaims(authTime: now + 600))
        let missing = TokenFactory.rsa(kid: "kid-a", payload: firebaseClaims(authTime: nil))
        var noIat = firebaseClaims(authTime: now)
        noIat.removeValue(forKey: "iat")
        var wrongProject = firebaseClaims(authTime: now)
        wrongProject["aud"] = "other-project"
        let cases: [(String, AuthFailureReason)] = [
            (future, .authTimeInFuture), (missing, .malformed),
            (TokenFactory.rsa(kid: "kid-a", payload: noIat), .malformed),
            (TokenFactory.rsa(kid: "kid-a", payload: wrongProject), .wrongAudience),
            (TokenFactory.rsa(kid: "kid-b", payload: firebaseClaims(authTime: now)), .unknownKey),
        ]
        for (token, reason) in cases {
            do {
                _ = try await auth.authenticate(authorization: "Firebase \(token)")
                Issue.record("accepted, expected \(reason)")
            } catch {
                #expect(error.reason == reason)
            }
        }
    }

    @Test func devTokensVerify() async throws {
        let auth = try Self.authenticator(engine: .openSSL)
        let now = Timestamp.now()
        for (alg, pem, kid) in [
            ("RS256", TestKeys.shared.rsaPrivate, "rsa-1"), ("ES256", TestKeys.shared.ecPrivate, "ec-1"),
            ("HS256", nil, nil),
        ] as [(String, String?, String?)] {
            let token = try DevToken.mint(
                signingKeyPEM: pem, hmacSecret: alg == "HS256" ? Self.secret : nil, algorithm: alg, keyID: kid,
                uid: "dev-user", claims: ["admin": true, "sub": "ignored"], ttlSeconds: 600,
                issuer: "https://issuer.test", audience: "portcullis-test", now: now)
            let principal = try #require(try await auth.authenticate(authorization: "Bearer \(token)"))
            #expect(principal.uid == "dev-user")
            #expect(principal.claims["admin"] == .bool(true))
            #expect(principal.claims["exp"] == .int(now.secondsSinceEpoch + 600))
        }
        #expect(throws: AuthError.self) {
            try DevToken.mint(
                signingKeyPEM: nil, hmacSecret: nil, algorithm: "none", keyID: nil, uid: "u", claims: [:],
                ttlSeconds: 60, issuer: nil, audience: nil, now: now)
        }
        #expect(throws: AuthError.self) {
            try DevToken.mint(
                signingKeyPEM: TestKeys.shared.ecPrivate, hmacSecret: nil, algorithm: "RS256", keyID: nil,
                uid: "u", claims: [:], ttlSeconds: 60, issuer: nil, audience: nil, now: now)
        }
    }
}
