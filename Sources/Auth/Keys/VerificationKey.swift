public import Crypto

/// One key that may verify tokens, with the algorithms pinned to it.
public struct VerificationKey: Sendable {
    public enum Material: Sendable {
        case publicKey(PublicKey)
        /// The configured HMAC secret (never loaded from a key source).
        case hmacSecret([UInt8])
    }

    /// The `kid` tokens name this key by; nil for keys from a plain PEM file (they match any `kid`).
    public let keyID: String?
    public let material: Material
    /// The only algorithms a token verified with this key may use.
    public let allowedAlgorithms: Set<JWTAlgorithm>
    /// Identifies kid + key material; verification-cache entries remember it so rotation can invalidate them.
    public let fingerprint: String

    /// A public key; `algorithm` (a JWK's `alg`) narrows the pinned set further when given.
    public init(keyID: String?, publicKey: PublicKey, algorithm: JWTAlgorithm? = nil) {
        self.keyID = keyID
        self.material = .publicKey(publicKey)
        var allowed = JWTAlgorithm.allowed(for: publicKey.kind)
        if let algorithm { allowed = allowed.intersection([algorithm]) }
        self.allowedAlgorithms = allowed
        self.fingerprint = Base64URL.encode(SHA256.hash(Array("\(keyID ?? "")\n\(publicKey.pem)".utf8)))
    }

    init(hmacSecret: [UInt8]) {
        keyID = nil
        material = .hmacSecret(hmacSecret)
        allowedAlgorithms = [.hs256, .hs384, .hs512]
        fingerprint = "hmac"
    }
}
