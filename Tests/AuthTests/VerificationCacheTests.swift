import Crypto
import PortcullisCore
import Synchronization
import Testing

@testable import Auth

@Suite struct VerificationCacheTests {
    static func digest(_ i: Int) -> CredentialDigest {
        SHA256.hash(Array("token-\(i)".utf8)).withUnsafeBytes { CredentialDigest(bytes: $0) }
    }
    static func verified(_ uid: String, until: Int64 = .max, key: String = "k") -> VerifiedToken {
        VerifiedToken(principal: Principal(uid: uid, claims: [:]), validUntil: until, keyFingerprint: key)
    }

    @Test func leastRecentlyUsedIsEvicted() {
        let cache = VerificationCache(capacity: 3)
        for i in 0..<3 { cache.insert(Self.digest(i), Self.verified("u\(i)")) }
        #expect(cache.lookup(Self.digest(0), now: 0)?.principal.uid == "u0")  // 0 becomes most recent
        cache.insert(Self.digest(3), Self.verified("u3"))  // evicts 1
        #expect(cache.count == 3)
        #expect(cache.lookup(Self.digest(1), now: 0) == nil)
        for i in [0, 2, 3] { #expect(cache.lookup(Self.digest(i), now: 0)?.principal.uid == "u\(i)") }
        for i in 4..<1000 { cache.insert(Self.digest(i), Self.verified("u\(i)")) }
        #expect(cache.count == 3)
        for i in 997..<1000 { #expect(cache.lookup(Self.digest(i), now: 0) != nil) }
    }

    @Test func entriesExpire() {
        let cache = VerificationCache(capacity: 10)
        cache.insert(Self.digest(1), Self.verified("u", until: 100))
        #expect(cache.lookup(Self.digest(1), now: 99) != nil)
        #expect(cache.lookup(Self.digest(1), now: 100) == nil)
        #expect(cache.count == 0)
    }

    @Test func rotationDropsEntriesOfRemovedKeys() {
        let cache = VerificationCache(capacity: 10)
        cache.insert(Self.digest(1), Self.verified("a", key: "old"))
        cache.insert(Self.digest(2), Self.verified("b", key: "kept"))
        cache.insert(Self.digest(3), Self.verified("c", key: "hmac"))
        cache.retain(fingerprints: ["kept", "new"])
        #expect(cache.lookup(Self.digest(1), now: 0) == nil)
        #expect(cache.lookup(Self.digest(2), now: 0) != nil)
        #expect(cache.lookup(Self.digest(3), now: 0) != nil)
        #expect(VerificationCache(capacity: 0).lookup(Self.digest(1), now: 0) == nil)
    }

    /// The authenticator's hit path: the second presentation is served from the cache (counted), and a cached
    /// token still expires.
    @Test func authenticatorCacheHits() async throws {
        let metrics = MetricsRegistry()
        let auth = try ValidTokenTests.authenticator(engine: .openSSL, metrics: metrics)
        let token = TokenFactory.rsa(kid: "rsa-1", payload: TokenFactory.claims())
        for _ in 0..<5 { #expect(try await auth.authenticate(authorization: "Bearer \(token)")?.uid == "user-1") }
        #expect(auth.cachedTokenCount == 1)
        #expect(metrics.render().contains("portcullis_auth_cache_hits_total 4\n"))
        // A cached token still expires: with the clock moved past exp + leeway, the entry is dropped and the
        // cold check refuses the token.
        let clock = Mutex(Timestamp.now())
        let controlled = Authenticator(
            configuration: auth.configuration, keySource: auth.keySource, metrics: MetricsRegistry(),
            logger: .disabled, clock: { clock.withLock { $0 } })
        let now = clock.withLock { $0 }.secondsSinceEpoch
        var claims = TokenFactory.claims(now: now)
        claims["exp"] = .int(now + 10)
        let short = TokenFactory.rsa(kid: "rsa-1", payload: claims)
        #expect(try await controlled.authenticate(authorization: "Bearer \(short)") != nil)
        clock.withLock { $0 = Timestamp(nanosecondsSinceEpoch: (now + 69) * 1_000_000_000) }
        #expect(try await controlled.authenticate(authorization: "Bearer \(short)") != nil)
        #expect(controlled.cachedTokenCount == 1)
        clock.withLock { $0 = Timestamp(nanosecondsSinceEpoch: (now + 70) * 1_000_000_000) }
        await #expect(throws: AuthError(.expired, "token expired")) {
            try await controlled.authenticate(authorization: "Bearer \(short)")
        }
        #expect(controlled.cachedTokenCount == 0)
    }
}
