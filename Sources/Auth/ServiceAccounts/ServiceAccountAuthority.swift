import Crypto
public import PortcullisCore

/// The gateway's side of service accounts: the OAuth 2.0 JWT-bearer grant (RFC 7523, as Google's token endpoint
/// serves it) that trades an account's signed assertion for a short-lived access token, and the check of the
/// credentials such an account then presents — that access token, or a self-signed JWT (google-auth sends one
/// instead of calling the token endpoint for some audiences).
///
/// Every use looks the account up in the registry as it is now: removing an account from the accounts file (and
/// reloading it) refuses its assertions, its self-signed JWTs and every access token it obtained; a changed
/// grant applies to the next request. Thread-safe; no I/O.
public final class ServiceAccountAuthority: Sendable {
    public let registry: ServiceAccountRegistry
    private let sealer: AccessTokenSealer
    /// Audiences a self-signed JWT may name (the API it is meant for).
    private let selfSignedAudiences: [String]
    private let leewaySeconds: Int64
    private let clock: @Sendable () -> Timestamp

    /// Lifetime of an issued access token, as Google's (one hour).
    public static let accessTokenLifetime: Int64 = 3600
    /// Longest `exp - iat` an assertion or self-signed JWT may span (Google: "short-lived token (60 minutes)").
    public static let maxJWTLifetime: Int64 = 3600
    /// Upper bound on a JWT's size before any parsing.
    static let maxJWTBytes = 16 * 1024

    /// `keys`: the signing keys (the first seals, all open). `selfSignedAudiences`: what a self-signed JWT's `aud`
    /// may be. `leewaySeconds`: clock skew allowed on `iat`/`exp`.
    public init(
        registry: ServiceAccountRegistry, keys: [AccessTokenKey], selfSignedAudiences: [String],
        leewaySeconds: Int = 60, clock: @escaping @Sendable () -> Timestamp = { .now() }
    ) {
        self.registry = registry
        self.sealer = AccessTokenSealer(keys: keys)
        self.selfSignedAudiences = selfSignedAudiences
        self.leewaySeconds = Int64(max(0, leewaySeconds))
        self.clock = clock
    }

    /// An access token and its lifetime in seconds (`expires_in`).
    public struct IssuedToken: Sendable {
        public let accessToken: String
        public let expiresIn: Int64
    }

    /// The JWT-bearer grant: `assertion` must be an RS256 JWT whose `iss` is a registered account, signed by that
    /// account's key (`kid`, when present, naming it), whose `aud` is one of `audiences` (the token endpoint's
    /// URL), with `iat` and `exp` at most an hour apart around now, and with no `sub` other than the account
    /// itself (no delegation). Any failure is Google's `invalid_grant`.
    public func exchange(assertion: [UInt8], audiences: [String]) throws(OAuthGrantError) -> IssuedToken {
        let now = clock().secondsSinceEpoch
        do throws(AuthError) {
            let token = try parse(assertion)
            guard let iss = token.claims["iss"]?.stringValue, let account = registry.account(email: iss) else {
                throw AuthError(.unknownKey, "account not found")
            }
            try verify(token, account: account, audiences: audiences, now: now)
            let expiresAt = now + Self.accessTokenLifetime
            return IssuedToken(
                accessToken: sealer.seal(email: account.email, keyID: account.keyID, expiresAt: expiresAt),
                expiresIn: Self.accessTokenLifetime)
        } catch {
            throw OAuthGrantError(error)
        }
    }

    /// What an `Authorization` header means for service accounts.
    public enum Outcome: Sendable {
        /// Not a service account's credential: another authenticator decides.
        case notServiceAccount
        case principal(Principal)
    }

    /// Checks a header's credential if it is one of a service account's: an access token this gateway issued
    /// (prefix `pcsa.`), or a JWT whose `kid` is a registered account's key id. A genuine-looking credential that
    /// fails (expired, revoked, bad signature) throws; anything else is `.notServiceAccount`.
    public func authenticate(authorizationBytes header: some Collection<UInt8>) throws(AuthError) -> Outcome {
        let bytes = Array(header)
        let credential: [UInt8]
        switch bytes.withUnsafeBufferPointer({ AuthorizationHeader.parse($0) }) {
        case .credential(let range): credential = Array(bytes[range])
        default: return .notServiceAccount
        }
        if credential.starts(with: AccessTokenSealer.prefix.utf8) {
            return .principal(try principal(forAccessToken: credential))
        }
        guard credential.count <= Self.maxJWTBytes, credential.count(where: { $0 == UInt8(ascii: ".") }) == 2,
            let token = try? parse(credential), let kid = token.compact.keyID,
            let account = registry.account(keyID: kid)
        else { return .notServiceAccount }
        guard token.claims["iss"]?.stringValue.bytesEqual(account.email) == true else {
            throw AuthError(.wrongIssuer, "a self-signed JWT's iss must be the account of its kid")
        }
        try verify(token, account: account, audiences: selfSignedAudiences, now: clock().secondsSinceEpoch)
        return .principal(account.principal)
    }

    private func principal(forAccessToken token: [UInt8]) throws(AuthError) -> Principal {
        let contents = try sealer.open(token)
        guard clock().secondsSinceEpoch < contents.expiresAt else {
            throw AuthError(.expired, "access token expired")
        }
        guard let account = registry.account(email: contents.email), account.keyID.bytesEqual(contents.keyID) else {
            throw AuthError(.unknownKey, "the service account was removed or given a new key")
        }
        return account.principal
    }

    /// A structurally valid JWT and its payload (nothing verified yet).
    private struct ParsedJWT {
        let compact: CompactToken
        let claims: [String: JSONValue]
    }

    private func parse(_ bytes: [UInt8]) throws(AuthError) -> ParsedJWT {
        guard bytes.count <= Self.maxJWTBytes else { throw AuthError(.oversize, "JWT too long") }
        let compact = try CompactToken.parse(bytes)
        guard let claims = try? JSONValue.parse(compact.payload).objectValue else {
            throw AuthError(.malformed, "payload is not a JSON object")
        }
        return ParsedJWT(compact: compact, claims: claims)
    }

    /// Signature (RS256 with the account's key), key id, audience, subject and times.
    private func verify(_ token: ParsedJWT, account: ServiceAccount, audiences: [String], now: Int64)
        throws(AuthError)
    {
        guard token.compact.algorithm == .rs256 else {
            throw AuthError(.algorithmNotAllowed, "service-account JWTs are RS256")
        }
        if let kid = token.compact.keyID, !kid.bytesEqual(account.keyID) {
            throw AuthError(.badSignature, "kid is not the account's current key")
        }
        guard
            account.publicKey.verify(
                signature: token.compact.signature, data: token.compact.signingInput, algorithm: .rs256)
        else { throw AuthError(.badSignature, "signature does not verify") }
        let audienceMatches: Bool
        switch token.claims["aud"] {
        case .string(let aud)?: audienceMatches = audiences.contains { $0.bytesEqual(aud) }
        case .array(let list)?:
            audienceMatches = list.contains { value in
                guard let aud = value.stringValue else { return false }
                return audiences.contains { $0.bytesEqual(aud) }
            }
        default: audienceMatches = false
        }
        guard audienceMatches else { throw AuthError(.wrongAudience, "audience does not match") }
        if let sub = token.claims["sub"] {
            guard sub.stringValue.bytesEqual(account.email) else {
                throw AuthError(.badSubject, "sub must be the account itself (no delegation)")
            }
        }
        guard let iat = token.claims["iat"].flatMap(TokenVerifier.numericDate),
            let exp = token.claims["exp"].flatMap(TokenVerifier.numericDate)
        else { throw AuthError(.malformed, "iat and exp are required") }
        guard exp > iat, exp - iat <= Self.maxJWTLifetime else {
            throw AuthError(.expired, "exp must be after iat and at most an hour later")
        }
        guard iat <= now.addingSaturating(leewaySeconds) else {
            throw AuthError(.issuedInFuture, "issued in the future (iat)")
        }
        guard now < exp.addingSaturating(leewaySeconds) else { throw AuthError(.expired, "JWT expired") }
    }
}

/// A refused JWT-bearer grant, in OAuth 2.0's terms (RFC 6749 §5.2) with Google's wording: always
/// `invalid_grant` (HTTP 400), and a description naming the failed check — never the assertion's text.
public struct OAuthGrantError: Error, Sendable, CustomStringConvertible {
    public let error: String
    public let errorDescription: String
    /// The underlying reason class (logs, metrics).
    public let reason: AuthFailureReason

    init(_ cause: AuthError) {
        error = "invalid_grant"
        reason = cause.reason
        switch cause.reason {
        case .badSignature: errorDescription = "Invalid JWT Signature."
        case .expired, .issuedInFuture, .notYetValid:
            errorDescription =
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
        case .unknownKey: errorDescription = "Invalid grant: account not found"
        case .wrongAudience: errorDescription = "Invalid JWT: Failed audience check."
        default: errorDescription = "Invalid JWT: \(cause.message)."
        }
    }

    public var description: String { "\(error): \(errorDescription)" }
}
