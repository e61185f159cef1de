import Crypto
public import PortcullisCore

/// One key access tokens are sealed with: the gateway's `--signing-key` entries (id and secret).
public struct AccessTokenKey: Sendable {
    public let id: String
    public let secret: [UInt8]

    public init(id: String, secret: [UInt8]) {
        self.id = id
        self.secret = secret
    }
}

/// The short-lived access tokens the token endpoint hands out for service accounts, and their check.
///
/// Format: `pcsa.` base64url(key id) `.` base64url(payload JSON `{"a": email, "k": key id of the account, "e":
/// expiry}`) `.` base64url(HMAC-SHA256). The MAC key is derived from the signing secret for this purpose only
/// (HKDF-SHA256, info `portcullis/service-account-token/v1`), so every instance sharing `--signing-key` accepts
/// the token and no other capability opens as one. Nothing secret is inside (an email and a key id), hence a MAC
/// and no encryption. The token binds the account's key id: the token stops working when the account is removed
/// or re-keyed, which `ServiceAccountAuthority` checks on every use. Four dot-separated parts: never mistaken
/// for a JWT.
struct AccessTokenSealer: Sendable {
    static let prefix = "pcsa."
    /// Upper bound on a token presented for checking, so hostile input stays cheap.
    static let maxTokenBytes = 2048

    private struct Keyed: Sendable {
        let id: ExactString
        let idPart: String
        let macKey: [UInt8]
    }

    private let keys: [Keyed]

    init(keys: [AccessTokenKey]) {
        precondition(!keys.isEmpty, "access tokens need a signing key")
        self.keys = keys.map { key in
            Keyed(
                id: ExactString(key.id), idPart: Base64URL.encode(Array(key.id.utf8)),
                macKey: HKDF.sha256(
                    secret: key.secret, info: Array("portcullis/service-account-token/v1".utf8), length: 32))
        }
    }

    /// What a genuine token says.
    struct Contents: Sendable {
        let email: String
        let keyID: String
        let expiresAt: Int64
    }

    func seal(email: String, keyID: String, expiresAt: Int64) -> String {
        let key = keys[0]
        let payload = JSONValue.object(["a": .string(email), "k": .string(keyID), "e": .int(expiresAt)])
        let signed = Self.prefix + key.idPart + "." + Base64URL.encode(Array(payload.encoded().utf8))
        return signed + "." + Base64URL.encode(HMAC.sha256(key: key.macKey, data: Array(signed.utf8)))
    }

    /// The contents of a token this gateway sealed, or why not. Expiry is the caller's to check.
    func open(_ token: [UInt8]) throws(AuthError) -> Contents {
        guard token.count <= Self.maxTokenBytes else { throw AuthError(.oversize, "access token too long") }
        guard token.starts(with: Self.prefix.utf8) else { throw AuthError(.malformed, "not an access token") }
        let parts = token.dropFirst(Self.prefix.utf8.count).split(
            separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let mac = Base64URL.decode(String(decoding: parts[2], as: UTF8.self)) else {
            throw AuthError(.malformed, "access token is not well formed")
        }
        guard let key = keys.first(where: { $0.idPart.utf8.elementsEqual(parts[0]) }) else {
            throw AuthError(.unknownKey, "access token was sealed with a key that is not configured")
        }
        let signed = token[..<(parts[1].endIndex)]
        guard ConstantTime.equals(HMAC.sha256(key: key.macKey, data: Array(signed)), mac) else {
            throw AuthError(.badSignature, "access token does not verify")
        }
        guard let payloadBytes = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
            let payload = try? JSONValue.parse(payloadBytes), let email = payload["a"]?.stringValue,
            let keyID = payload["k"]?.stringValue, let expiresAt = payload["e"]?.int64Value
        else { throw AuthError(.malformed, "access token payload is not well formed") }
        return Contents(email: email, keyID: keyID, expiresAt: expiresAt)
    }
}
