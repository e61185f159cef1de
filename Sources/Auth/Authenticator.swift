public import PortcullisCore
import Crypto

/// Turns an `Authorization` header into a `Principal` (DESIGN §1 "Authenticate").
///
/// No header → nil (anonymous; the rules decide). The admin key in either scheme (`Bearer <key>` or
/// `Firebase <key>`, which pyrebase and its forks send) → `Principal.admin` (constant-time comparison of SHA-256
/// digests, so neither content nor length leaks). Otherwise the credential must be a JWT
/// that `TokenVerifier` accepts; verified tokens are cached (LRU keyed by the token's SHA-256) until `exp`.
/// Every failure increments `portcullis_auth_failures_total{reason}`. Tokens are never logged.
public final class Authenticator: Sendable {
    public let configuration: AuthConfiguration
    public let keySource: KeySource?
    private let verifier: TokenVerifier
    private let cache: VerificationCache
    private let failures: [AuthFailureReason: Counter]
    private let cacheHits: Counter
    private let adminKeyDigest: [UInt8]?
    private let logger: Logger
    /// Wall clock for claim checks and cache expiry (tests substitute a controllable one).
    private let clock: @Sendable () -> Timestamp

    public convenience init(configuration: AuthConfiguration, keySource: KeySource?, metrics: MetricsRegistry, logger: Logger) {
        self.init(configuration: configuration, keySource: keySource, metrics: metrics, logger: logger, clock: { .now() })
    }

    init(configuration: AuthConfiguration, keySource: KeySource?, metrics: MetricsRegistry, logger: Logger,
         clock: @escaping @Sendable () -> Timestamp) {
        self.clock = clock
        self.configuration = configuration
        self.keySource = keySource
        self.logger = logger
        verifier = TokenVerifier(configuration: configuration)
        let cache = VerificationCache(capacity: configuration.cacheCapacity)
        self.cache = cache
        let family = metrics.counter(
            "portcullis_auth_failures_total", help: "Rejected credentials by reason class.", labels: ["reason"])
        var counters: [AuthFailureReason: Counter] = [:]
        for reason in AuthFailureReason.allCases { counters[reason] = family.labels(reason.rawValue) }
        failures = counters
        cacheHits = metrics.counter("portcullis_auth_cache_hits_total", help: "Tokens accepted from the verification cache.")
            .labels([])
        if let adminKey = configuration.adminKey, !adminKey.isEmpty {
            adminKeyDigest = SHA256.hash(adminKey)
        } else {
            adminKeyDigest = nil
        }
        keySource?.onUpdate { keys in cache.retain(fingerprints: keys.fingerprints) }
    }

    /// Loads the keys and starts their background refresh.
    public func start() async { await keySource?.start() }

    /// Stops the key refresh.
    public func stop() { keySource?.stop() }

    /// nil/absent (or blank) header → nil (anonymous). Accepts the schemes `Firebase` and `Bearer`
    /// (case-insensitive); anything else is `unsupportedScheme`.
    public func authenticate(authorization: String?) async throws(AuthError) -> Principal? {
        guard var header = authorization else { return nil }
        let resolution = header.withUTF8 { resolve(UnsafeRawBufferPointer($0)) }
        return try await finish(resolution)
    }

    /// `authenticate(authorization:)` for the header's bytes as received (a slice of the request head's
    /// buffer): the cached path hashes the credential in place — no `String`, no copy of the token, one
    /// SHA-256, one LRU lookup; only a token that must be verified is copied out.
    public func authenticate(authorizationBytes: ArraySlice<UInt8>?) async throws(AuthError) -> Principal? {
        guard let header = authorizationBytes else { return nil }
        let resolution = header.withUnsafeBytes { resolve($0) }
        return try await finish(resolution)
    }

    /// What the synchronous part decided: an answer, or a token to verify (the only part that may suspend).
    private enum Resolution {
        case decided(Principal?)
        case verify(token: [UInt8], key: TokenDigest, now: Timestamp)
    }

    private func finish(_ resolution: Result<Resolution, AuthError>) async throws(AuthError) -> Principal? {
        switch resolution {
        case .failure(let error): throw error
        case .success(.decided(let principal)): return principal
        case .success(.verify(let token, let key, let now)): return try await verifyUncached(token, key: key, now: now)
        }
    }

    /// Parses the scheme, checks the admin key and the cache, all on the header's bytes in place.
    private func resolve(_ header: UnsafeRawBufferPointer) -> Result<Resolution, AuthError> {
        let utf8 = header.bindMemory(to: UInt8.self)
        let credential: Range<Int>
        switch AuthorizationHeader.parse(utf8) {
        case .anonymous: return .success(.decided(nil))
        case .unsupportedScheme: return .failure(fail(AuthError(.unsupportedScheme, "use the Bearer or Firebase scheme")))
        case .emptyCredential: return .failure(fail(AuthError(.malformed, "empty credential")))
        case .credential(let range): credential = range
        }
        let token = UnsafeRawBufferPointer(rebasing: header[credential])
        let digest = SHA256.hash(token)
        if let adminKeyDigest, ConstantTime.equals(digest, adminKeyDigest) { return .success(.decided(.admin)) }
        if configuration.trustsEmulatorOwner, token.elementsEqual("owner".utf8) { return .success(.decided(.admin)) }
        guard credential.count <= configuration.maxTokenBytes else {
            return .failure(fail(AuthError(.oversize, "token longer than \(configuration.maxTokenBytes) bytes")))
        }
        let key = TokenDigest(digest)
        let now = clock()
        if let hit = cache.lookup(key, now: now.secondsSinceEpoch) {
            cacheHits.increment()
            return .success(.decided(hit.principal))
        }
        return .success(.verify(token: Array(token), key: key, now: now))
    }

    /// Verifies a bare token (no scheme, no admin key), using the cache.
    public func verify(token: some Sequence<UInt8>) async throws(AuthError) -> Principal {
        let bytes = Array(token)
        return try await verify(bytes, digest: SHA256.hash(bytes))
    }

    /// Number of cached verified tokens (observability, tests).
    public var cachedTokenCount: Int { cache.count }

    private func verify(_ token: [UInt8], digest: [UInt8]) async throws(AuthError) -> Principal {
        let now = clock()
        guard token.count <= configuration.maxTokenBytes else {
            throw fail(AuthError(.oversize, "token longer than \(configuration.maxTokenBytes) bytes"))
        }
        let key = TokenDigest(digest)
        if let hit = cache.lookup(key, now: now.secondsSinceEpoch) {
            cacheHits.increment()
            return hit.principal
        }
        return try await verifyUncached(token, key: key, now: now)
    }

    private func verifyUncached(_ token: [UInt8], key: TokenDigest, now: Timestamp) async throws(AuthError) -> Principal {
        let keys = keySource?.current ?? .empty
        do {
            let verified = try verifier.verify(token, keys: keys, now: now)
            cache.insert(key, verified)
            return verified.principal
        } catch let error where error.reason == .unknownKey {
            // Key rotation: refetch (rate-limited, shared with concurrent requests) and try once more.
            if let source = keySource, let refreshed = await source.refetchForUnknownKey() {
                do {
                    let verified = try verifier.verify(token, keys: refreshed, now: now)
                    cache.insert(key, verified)
                    return verified.principal
                } catch {
                    throw fail(error)
                }
            }
            throw fail(error)
        } catch {
            throw fail(error)
        }
    }

    private func fail(_ error: AuthError) -> AuthError {
        failures[error.reason]?.increment()
        logger.debug("authentication failed", [("reason", .string(error.reason.rawValue)), ("detail", .string(error.message))])
        return error
    }
}

/// The `Authorization` header split into scheme and credential, on raw UTF-8 (RFC 7235: `scheme SP credential`).
enum AuthorizationHeader: Equatable {
    case anonymous
    case unsupportedScheme
    case emptyCredential
    /// Byte range of the credential within the header. The two accepted schemes (`Bearer`, `Firebase`) mean
    /// the same: the credential is a JWT or the admin key either way.
    case credential(Range<Int>)

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> AuthorizationHeader {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }
        var lo = 0, hi = bytes.count
        while lo < hi, isSpace(bytes[lo]) { lo += 1 }
        while hi > lo, isSpace(bytes[hi - 1]) { hi -= 1 }
        guard lo < hi else { return .anonymous }
        var schemeEnd = lo
        while schemeEnd < hi, !isSpace(bytes[schemeEnd]) { schemeEnd += 1 }
        let scheme = UnsafeBufferPointer(rebasing: bytes[lo..<schemeEnd])
        guard equalsASCIILowercase(scheme, "bearer") || equalsASCIILowercase(scheme, "firebase") else {
            return .unsupportedScheme
        }
        var start = schemeEnd
        while start < hi, isSpace(bytes[start]) { start += 1 }
        guard start < hi else { return .emptyCredential }
        return .credential(start..<hi)
    }

    private static func equalsASCIILowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        let expected = word.utf8Start
        for i in 0..<bytes.count {
            var b = bytes[i]
            if b >= 0x41 && b <= 0x5A { b |= 0x20 }
            if b != expected[i] { return false }
        }
        return true
    }
}
