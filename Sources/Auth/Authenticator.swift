public import PortcullisCore
import Crypto

/// Turns an `Authorization` header into a `Principal` (DESIGN §1 "Authenticate").
///
/// No header → nil (anonymous; the rules decide). `Bearer <admin key>` → `Principal.admin` (constant-time
/// comparison of SHA-256 digests, so neither content nor length leaks). Otherwise the credential must be a JWT
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

    public init(configuration: AuthConfiguration, keySource: KeySource?, metrics: MetricsRegistry, logger: Logger) {
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
        guard let authorization else { return nil }
        let header = authorization.trimmingSpaces()
        if header.isEmpty { return nil }
        let schemeEnd = header.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? header.endIndex
        let scheme = header[..<schemeEnd].lowercased()
        let credential = header[schemeEnd...].trimmingSpaces()
        guard scheme == "bearer" || scheme == "firebase" else {
            throw fail(AuthError(.unsupportedScheme, "use the Bearer or Firebase scheme"))
        }
        guard !credential.isEmpty else { throw fail(AuthError(.malformed, "empty credential")) }
        let bytes = Array(credential.utf8)
        let digest = SHA256.hash(bytes)
        if scheme == "bearer", let adminKeyDigest, ConstantTime.equals(digest, adminKeyDigest) {
            return .admin
        }
        return try await verify(bytes, digest: digest)
    }

    /// Verifies a bare token (no scheme, no admin key), using the cache.
    public func verify(token: some Sequence<UInt8>) async throws(AuthError) -> Principal {
        let bytes = Array(token)
        return try await verify(bytes, digest: SHA256.hash(bytes))
    }

    /// Number of cached verified tokens (observability, tests).
    public var cachedTokenCount: Int { cache.count }

    private func verify(_ token: [UInt8], digest: [UInt8], now: Timestamp = .now()) async throws(AuthError) -> Principal {
        guard token.count <= configuration.maxTokenBytes else {
            throw fail(AuthError(.oversize, "token longer than \(configuration.maxTokenBytes) bytes"))
        }
        let key = TokenDigest(digest)
        if let hit = cache.lookup(key, now: now.secondsSinceEpoch) {
            cacheHits.increment()
            return hit.principal
        }
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
