/// What a valid token must look like. Built once at start-up by the executable; immutable afterwards.
public struct AuthConfiguration: Sendable {
    /// Required `iss` (exact match), or nil to accept any issuer.
    public var issuer: String?
    /// Required `aud` (the token's string, or one element of its array), or nil to accept any audience.
    public var audience: String?
    /// Clock skew tolerated for `exp`, `nbf`, `iat` and `auth_time`.
    public var leewaySeconds: Int = 60
    /// Firebase profile: `auth_time` must be present and not in the future, `iat` must be present.
    public var requireAuthTime: Bool = false
    /// Maximum number of verified tokens remembered (LRU).
    public var cacheCapacity: Int = 10_000
    /// Shared secret for HS256/384/512. HS* tokens are refused unless this is set — never keyed with a public key.
    public var hmacSecret: [UInt8]?
    /// `Authorization: Bearer <adminKey>` yields `Principal.admin`.
    public var adminKey: [UInt8]?
    /// Development only: `Authorization: Bearer owner` — what the Firebase tools send to emulators — yields
    /// `Principal.admin`. Off unless the operator asks for it.
    public var trustsEmulatorOwner: Bool = false
    /// Tokens longer than this are refused before parsing.
    public var maxTokenBytes: Int = 16 * 1024
    /// Which library checks signatures (see `SignatureEngine`).
    public var signatureEngine: SignatureEngine = .openSSL

    public init(
        issuer: String? = nil, audience: String? = nil, leewaySeconds: Int = 60, requireAuthTime: Bool = false,
        cacheCapacity: Int = 10_000, hmacSecret: [UInt8]? = nil, adminKey: [UInt8]? = nil
    ) {
        self.issuer = issuer
        self.audience = audience
        self.leewaySeconds = leewaySeconds
        self.requireAuthTime = requireAuthTime
        self.cacheCapacity = cacheCapacity
        self.hmacSecret = hmacSecret
        self.adminKey = adminKey
    }

    /// Google's public certificates for Firebase ID tokens (a `{"kid": "-----BEGIN CERTIFICATE-----..."}` map).
    public static let firebaseKeysURL =
        "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"

    /// `--firebase-project ID`: issuer `https://securetoken.google.com/ID`, audience `ID`, `auth_time` required,
    /// keys from Google's securetoken certificate URL.
    public static func firebase(projectID: String) -> (AuthConfiguration, keysURL: String) {
        let configuration = AuthConfiguration(
            issuer: "https://securetoken.google.com/\(projectID)", audience: projectID, requireAuthTime: true)
        return (configuration, firebaseKeysURL)
    }
}

/// The implementation that checks JWS signatures. Both see only tokens that already passed our structural,
/// algorithm and key-selection checks, and both are followed by the same claim checks.
public enum SignatureEngine: String, Sendable, CaseIterable {
    /// OpenSSL EVP with keys parsed once at load time (~40 µs per RS256 verify here). The default.
    case openSSL
    /// libjwt 1.10 `jwt_decode` with the key's PEM. It re-parses the PEM on every call, which costs ~1 ms with
    /// OpenSSL 3.0's decoders; kept as an independent second implementation (differential tests, fuzzing).
    case libJWT
}
