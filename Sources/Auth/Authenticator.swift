import Crypto
public import PortcullisCore

/// Turns an `Authorization` header into a `Principal` (docs/architecture.md).
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
    private let adminKeyDigest: CredentialDigest?
    private let logger: Logger
    /// Wall clock for claim checks and cache expiry (tests substitute a controllable one).
    private let clock: @Sendable () -> Timestamp

    public convenience init(
        configuration: AuthConfiguration, keySource: KeySource?, metrics: MetricsRegistry, logger: Logger
    ) {
        self.init(
            configuration: configuration, keySource: keySource, metrics: metrics, logger: logger, clock: { .now() })
    }

    init(
        configuration: AuthConfiguration, keySource: KeySource?, metrics: MetricsRegistry, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp
    ) {
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
        cacheHits = metrics.counter(
            "portcullis_auth_cache_hits_total", help: "Tokens accepted from the verification cache."
        )
        .labels([])
        if let adminKey = configuration.adminKey, !adminKey.isEmpty {
            adminKeyDigest = adminKey.withUnsafeBytes { Self.digest(of: $0) }
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
    ///
    /// The cached path reads the header's UTF-8 in place (a native string's own storage): no copy of the
    /// token, one SHA-256 into a stack buffer, one LRU lookup. Only a cache miss copies the token.
    public func authenticate(authorization: String?) async throws(AuthError) -> Principal? {
        guard let header = authorization else { return nil }
        let resolution =
            header.utf8.withContiguousStorageIfAvailable { resolve(header: UnsafeRawBufferPointer($0)) }
            ?? Array(header.utf8).withUnsafeBytes { resolve(header: $0) }
        return try await finish(resolution.get())
    }

    /// The same as `authenticate(authorization:)` for a header held as bytes (e.g. a range of the receive
    /// buffer): nil → anonymous. Contiguous collections are read in place.
    public func authenticate(authorizationBytes header: (some Collection<UInt8>)?) async throws(AuthError)
        -> Principal?
    {
        guard let header else { return nil }
        let resolution =
            header.withContiguousStorageIfAvailable { resolve(header: UnsafeRawBufferPointer($0)) }
            ?? Array(header).withUnsafeBytes { resolve(header: $0) }
        return try await finish(resolution.get())
    }

    /// Verifies a bare token (no scheme, no admin key), using the cache.
    public func verify(token: some Sequence<UInt8>) async throws(AuthError) -> Principal {
        let bytes = Array(token)
        guard bytes.count <= configuration.maxTokenBytes else {
            throw fail(AuthError(.oversize, "token longer than \(configuration.maxTokenBytes) bytes"))
        }
        let key = bytes.withUnsafeBytes { Self.digest(of: $0) }
        let now = clock()
        if let hit = cache.lookup(key, now: now.secondsSinceEpoch) {
            cacheHits.increment()
            return hit.principal
        }
        return try await verifyUncached(bytes, key: key, now: now)
    }

    /// Number of cached verified tokens (observability, tests).
    public var cachedTokenCount: Int { cache.count }

    /// What the synchronous part of authentication found: an answer, or a token that needs verifying.
    private enum Resolution {
        case done(Principal?)
        case verify([UInt8], key: CredentialDigest, now: Timestamp)
    }

    /// Scheme, admin key and cache, on the header's bytes (valid only for this call). Failures are counted.
    private func resolve(header: UnsafeRawBufferPointer) -> Result<Resolution, AuthError> {
        let credential: Range<Int>
        switch AuthorizationHeader.parse(header.assumingMemoryBound(to: UInt8.self)) {
        case .anonymous: return .success(.done(nil))
        case .unsupportedScheme:
            return .failure(fail(AuthError(.unsupportedScheme, "use the Bearer or Firebase scheme")))
        case .emptyCredential: return .failure(fail(AuthError(.malformed, "empty credential")))
        case .credential(let range):
            credential = range
        }
        let token = UnsafeRawBufferPointer(rebasing: header[credential])
        let key = Self.digest(of: token)
        if let adminKeyDigest, key.constantTimeEquals(adminKeyDigest) { return .success(.done(.admin)) }
        if configuration.trustsEmulatorOwner, token.elementsEqual("owner".utf8) { return .success(.done(.admin)) }
        guard credential.count <= configuration.maxTokenBytes else {
            return .failure(fail(AuthError(.oversize, "token longer than \(configuration.maxTokenBytes) bytes")))
        }
        let now = clock()
        if let hit = cache.lookup(key, now: now.secondsSinceEpoch) {
            cacheHits.increment()
            return .success(.done(hit.principal))
        }
        return .success(.verify(Array(token), key: key, now: now))
    }

    private func finish(_ resolution: Resolution) async throws(AuthError) -> Principal? {
        switch resolution {
        case .done(let principal): return principal
        case .verify(let token, let key, let now): return try await verifyUncached(token, key: key, now: now)
        }
    }

    /// SHA-256 of `bytes` straight into a stack buffer.
    static func digest(of bytes: UnsafeRawBufferPointer) -> CredentialDigest {
        withUnsafeTemporaryAllocation(byteCount: SHA256.byteCount, alignment: 8) { out in
            SHA256.hash(bytes, into: out)
            return CredentialDigest(bytes: UnsafeRawBufferPointer(out))
        }
    }

    /// Verifies, caches and returns the principal, marked with the token's digest (which the rules' decision
    /// memo keys on).
    private func verifyUncached(_ token: [UInt8], key: CredentialDigest, now: Timestamp) async throws(AuthError)
        -> Principal
    {
        let keys = keySource?.current ?? .empty
        do {
            return remember(try verifier.verify(token, keys: keys, now: now), key: key)
        } catch let error where error.reason == .unknownKey {
            // Key rotation: refetch (rate-limited, shared with concurrent requests) and try once more.
            if let source = keySource, let refreshed = await source.refetchForUnknownKey() {
                do {
                    return remember(try verifier.verify(token, keys: refreshed, now: now), key: key)
                } catch {
                    throw fail(error)
                }
            }
            throw fail(error)
        } catch {
            throw fail(error)
        }
    }

    private func remember(_ verified: VerifiedToken, key: CredentialDigest) -> Principal {
        let marked = VerifiedToken(
            principal: verified.principal.with(credentialDigest: key),
            validUntil: verified.validUntil, keyFingerprint: verified.keyFingerprint)
        cache.insert(key, marked)
        return marked.principal
    }

    private func fail(_ error: AuthError) -> AuthError {
        failures[error.reason]?.increment()
        logger.debug(
            "authentication failed", [("reason", .string(error.reason.rawValue)), ("detail", .string(error.message))])
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
