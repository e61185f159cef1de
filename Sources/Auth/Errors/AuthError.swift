/// Why a presented credential was refused. The raw values are the `reason` label of
/// `portcullis_auth_failures_total` and the reason class named in `WWW-Authenticate`.
public enum AuthFailureReason: String, Sendable, CaseIterable {
    /// Not a JWS compact token (segments, base64url, JSON, required header/claims missing or mistyped).
    case malformed
    /// Longer than `AuthConfiguration.maxTokenBytes` (checked before any parsing).
    case oversize
    /// An `Authorization` scheme other than `Bearer` or `Firebase`.
    case unsupportedScheme
    /// `none`, an unknown algorithm, or one the selected key may not be used with.
    case algorithmNotAllowed
    /// No key with the token's `kid` (after at most one rate-limited refetch).
    case unknownKey
    case badSignature
    case expired
    case notYetValid
    case issuedInFuture
    case wrongIssuer
    case wrongAudience
    /// `sub` missing, empty, not a string, or longer than 128 characters.
    case badSubject
    case authTimeInFuture
    /// No verification keys are loaded (the key source has never been fetched successfully).
    case noKeys
}

/// The one error type of the Auth module: a reason class plus a human message that never contains token text
/// or claim values (safe to log and to send in `WWW-Authenticate`).
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: AuthFailureReason
    public let message: String

    public init(_ reason: AuthFailureReason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason.rawValue): \(message)" }

    /// The `WWW-Authenticate` header value for the 401 (RFC 6750 §3), e.g.
    /// `Bearer error="invalid_token", error_description="expired: token expired"`. Quotes and backslashes in the
    /// message are dropped so the quoted-string stays valid.
    public var wwwAuthenticate: String {
        let error = reason == .unsupportedScheme ? "invalid_request" : "invalid_token"
        let text = "\(reason.rawValue): \(message)".unicodeScalars
            .filter { $0 != "\"" && $0 != "\\" && $0.value >= 0x20 && $0.value < 0x7F }
        return "Bearer error=\"\(error)\", error_description=\"\(String(String.UnicodeScalarView(text)))\""
    }
}
