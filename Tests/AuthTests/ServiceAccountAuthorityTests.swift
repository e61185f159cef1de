import Crypto
import PortcullisCore
import Synchronization
import Testing

@testable import Auth

/// The JWT-bearer grant and service-account credentials: a real key made by `ServiceAccountKeyFile`, assertions
/// signed with its private key, access tokens checked against the registry as it is now.
@Suite struct ServiceAccountAuthorityTests {
    static let tokenURI = "https://gw.example/oauth2/v4/token"

    /// One account (from a real key file) and its private key.
    struct Fixture {
        let made: ServiceAccountKeyFile
        let privateKey: PrivateKey
        let registry: ServiceAccountRegistry
        let authority: ServiceAccountAuthority
        let clock = ClockBox(1_900_000_000)

        init(grant: ServiceAccountGrant = .principal(uid: "worker", claims: ["role": "worker"])) throws {
            made = try ServiceAccountKeyFile.create(
                name: "worker", project: "demo", tokenURI: ServiceAccountAuthorityTests.tokenURI, grant: grant)
            let keyFile = try #require(try JSONValue.parse(made.json).objectValue)
            privateKey = try PrivateKey(pem: #require(keyFile["private_key"]?.stringValue))
            registry = ServiceAccountRegistry([made.account])
            let clock = self.clock
            authority = ServiceAccountAuthority(
                registry: registry, keys: [AccessTokenKey(id: "k1", secret: Array(repeating: 7, count: 32))],
                selfSignedAudiences: ["https://storage.googleapis.com/"], leewaySeconds: 60,
                clock: { Timestamp(nanosecondsSinceEpoch: clock.seconds * 1_000_000_000) })
        }

        func advance(_ seconds: Int64) { clock.value.withLock { $0 += seconds } }
        var current: Int64 { clock.seconds }

        /// An RS256 JWT signed with the account's key.
        func jwt(_ claims: [String: JSONValue], kid: String? = nil, key: PrivateKey? = nil) throws -> String {
            var header: [String: JSONValue] = ["alg": "RS256", "typ": "JWT"]
            header["kid"] = .string(kid ?? made.account.keyID)
            let input =
                Base64URL.encode(Array(JSONValue.object(header).encoded().utf8)) + "."
                + Base64URL.encode(Array(JSONValue.object(claims).encoded().utf8))
            let signature = try (key ?? privateKey).sign(Array(input.utf8), algorithm: .rs256)
            return input + "." + Base64URL.encode(signature)
        }

        func assertion(aud: String = ServiceAccountAuthorityTests.tokenURI, iat: Int64? = nil, lifetime: Int64 = 3600)
            -> [String: JSONValue]
        {
            let issued = iat ?? current
            return [
                "iss": .string(made.account.email), "aud": .string(aud), "iat": .int(issued),
                "exp": .int(issued + lifetime), "scope": "https://www.googleapis.com/auth/devstorage.full_control",
            ]
        }
    }

    /// A wall clock the test moves.
    final class ClockBox: Sendable {
        let value: Mutex<Int64>
        init(_ seconds: Int64) { value = Mutex(seconds) }
        var seconds: Int64 { value.withLock { $0 } }
    }

    @Test func keyFileHasGooglesShape() throws {
        let fixture = try Fixture()
        let file = try #require(try JSONValue.parse(fixture.made.json).objectValue)
        #expect(file["type"]?.stringValue == "service_account")
        #expect(file["project_id"]?.stringValue == "demo")
        #expect(file["client_email"]?.stringValue == "worker@demo.iam.portcullis")
        #expect(file["token_uri"]?.stringValue == Self.tokenURI)
        #expect(file["private_key_id"]?.stringValue?.utf8.count == 40)
        #expect(file["private_key"]?.stringValue?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)
        #expect(fixture.privateKey.kind == .rsa(bits: 2048))
    }

    @Test func accountsFileRoundTrips() throws {
        let fixture = try Fixture()
        let admin = try ServiceAccountKeyFile.create(
            name: "ci", project: "demo", tokenURI: Self.tokenURI, grant: .admin)
        let text = ServiceAccountsFile.render([fixture.made.account, admin.account])
        let parsed = try ServiceAccountsFile.parse(Array(text.utf8))
        #expect(parsed.map(\.email) == ["worker@demo.iam.portcullis", "ci@demo.iam.portcullis"])
        #expect(parsed[0].grant == .principal(uid: "worker", claims: ["role": "worker"]))
        #expect(parsed[1].grant == .admin)
        #expect(parsed[0].publicKey.pem == fixture.made.account.publicKey.pem)
        let twice = ServiceAccountsFile.render([fixture.made.account, fixture.made.account])
        #expect(throws: ServiceAccountsFile.Problem.self) { try ServiceAccountsFile.parse(Array(twice.utf8)) }
        #expect(throws: ServiceAccountsFile.Problem.self) {
            try ServiceAccountsFile.parse(Array(#"{"accounts":[{"client_email":"a","private_key_id":"b"}]}"#.utf8))
        }
    }

    @Test func exchangeIssuesATokenThatActsAsTheGrant() throws {
        let fixture = try Fixture()
        let issued = try fixture.authority.exchange(
            assertion: Array(fixture.jwt(fixture.assertion()).utf8), audiences: [Self.tokenURI])
        #expect(issued.expiresIn == 3600)
        let outcome = try fixture.authority.authenticate(authorizationBytes: Array("Bearer \(issued.accessToken)".utf8))
        guard case .principal(let principal) = outcome else { Issue.record("not accepted"); return }
        #expect(principal.uid == "worker" && !principal.isAdmin)
        #expect(principal.claims["role"] == "worker" && principal.claims["sub"] == "worker")
    }

    @Test func adminGrantActsAsAdmin() throws {
        let fixture = try Fixture(grant: .admin)
        let issued = try fixture.authority.exchange(
            assertion: Array(fixture.jwt(fixture.assertion()).utf8), audiences: [Self.tokenURI])
        let outcome = try fixture.authority.authenticate(authorizationBytes: Array("Bearer \(issued.accessToken)".utf8))
        guard case .principal(let principal) = outcome else { Issue.record("not accepted"); return }
        #expect(principal.isAdmin)
    }

    @Test func refusedAssertionsAreInvalidGrant() throws {
        let fixture = try Fixture()
        let other = try PrivateKey.generateRSA()
        let cases: [(String, String, String)] = [
            ("wrong key", try fixture.jwt(fixture.assertion(), key: other), "Invalid JWT Signature."),
            (
                "wrong audience", try fixture.jwt(fixture.assertion(aud: "https://elsewhere.example/token")),
                "Invalid JWT: Failed audience check."
            ),
            (
                "expired", try fixture.jwt(fixture.assertion(iat: fixture.current - 7200)),
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            ),
            (
                "too long-lived", try fixture.jwt(fixture.assertion(lifetime: 7200)),
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            ),
            (
                "from the future", try fixture.jwt(fixture.assertion(iat: fixture.current + 600)),
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            ),
            (
                "unknown account",
                try fixture.jwt(
                    fixture.assertion().merging(["iss": "nobody@demo.iam.portcullis"]) { $1 }),
                "Invalid grant: account not found"
            ),
            ("not a JWT", "not-a-jwt", "Invalid JWT: token must have 3 dot-separated segments."),
        ]
        for (name, assertion, description) in cases {
            do {
                _ = try fixture.authority.exchange(assertion: Array(assertion.utf8), audiences: [Self.tokenURI])
                Issue.record("\(name): accepted")
            } catch {
                #expect(error.error == "invalid_grant", "\(name)")
                #expect(error.errorDescription == description, "\(name)")
            }
        }
    }

    @Test func removingOrRekeyingTheAccountRevokesItsTokens() throws {
        let fixture = try Fixture()
        let issued = try fixture.authority.exchange(
            assertion: Array(fixture.jwt(fixture.assertion()).utf8), audiences: [Self.tokenURI])
        let header = Array("Bearer \(issued.accessToken)".utf8)
        fixture.registry.replace(with: [])
        #expect(throws: AuthError.self) { try fixture.authority.authenticate(authorizationBytes: header) }
        let rekeyed = try ServiceAccountKeyFile.create(
            name: "worker", project: "demo", tokenURI: Self.tokenURI, grant: .admin)
        fixture.registry.replace(with: [rekeyed.account])
        #expect(throws: AuthError.self) { try fixture.authority.authenticate(authorizationBytes: header) }
        fixture.registry.replace(with: [fixture.made.account])
        _ = try fixture.authority.authenticate(authorizationBytes: header)
    }

    @Test func accessTokensExpireAndCannotBeEdited() throws {
        let fixture = try Fixture()
        let issued = try fixture.authority.exchange(
            assertion: Array(fixture.jwt(fixture.assertion()).utf8), audiences: [Self.tokenURI])
        var edited = Array(issued.accessToken.utf8)
        let payloadStart = edited.indices.filter { edited[$0] == UInt8(ascii: ".") }[1] + 1
        edited[payloadStart + 3] = edited[payloadStart + 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: AuthError.self) {
            try fixture.authority.authenticate(authorizationBytes: Array("Bearer ".utf8) + edited)
        }
        fixture.advance(3601)
        #expect(throws: AuthError(.expired, "access token expired")) {
            try fixture.authority.authenticate(authorizationBytes: Array("Bearer \(issued.accessToken)".utf8))
        }
    }

    @Test func selfSignedJWTsAreAcceptedForTheirAudienceOnly() throws {
        let fixture = try Fixture()
        let email = JSONValue.string(fixture.made.account.email)
        var claims = fixture.assertion(aud: "https://storage.googleapis.com/")
        claims["sub"] = email
        let good = try fixture.authority.authenticate(authorizationBytes: Array("Bearer \(fixture.jwt(claims))".utf8))
        guard case .principal(let principal) = good else { Issue.record("not accepted"); return }
        #expect(principal.uid == "worker")
        claims["aud"] = "https://elsewhere.example/"
        #expect(throws: AuthError.self) {
            try fixture.authority.authenticate(authorizationBytes: Array("Bearer \(fixture.jwt(claims))".utf8))
        }
        // A JWT whose kid is no account's is someone else's to judge.
        let foreign = try fixture.authority.authenticate(
            authorizationBytes: Array("Bearer \(fixture.jwt(claims, kid: "other-kid"))".utf8))
        guard case .notServiceAccount = foreign else { Issue.record("claimed a foreign JWT"); return }
        guard case .notServiceAccount = try fixture.authority.authenticate(authorizationBytes: Array("Bearer k".utf8))
        else { Issue.record("claimed an admin key"); return }
    }
}
