public import Crypto

/// The JWS algorithms Portcullis accepts at all (RFC 7518 names). `none`, PS*, ES512 and anything else are refused.
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    case hs256 = "HS256", hs384 = "HS384", hs512 = "HS512"
    case rs256 = "RS256", rs384 = "RS384", rs512 = "RS512"
    case es256 = "ES256", es384 = "ES384"

    /// The asymmetric algorithm, or nil for HMAC.
    public var signing: SigningAlgorithm? {
        switch self {
        case .hs256, .hs384, .hs512: nil
        case .rs256: .rs256
        case .rs384: .rs384
        case .rs512: .rs512
        case .es256: .es256
        case .es384: .es384
        }
    }

    var hmacDigest: HMAC.Digest? {
        switch self {
        case .hs256: .sha256
        case .hs384: .sha384
        case .hs512: .sha512
        default: nil
        }
    }

    var isHMAC: Bool { hmacDigest != nil }

    /// Algorithms a public key of this kind may verify: RS* for RSA; exactly the curve's ES* for EC.
    static func allowed(for kind: KeyKind) -> Set<JWTAlgorithm> {
        switch kind {
        case .rsa: [.rs256, .rs384, .rs512]
        case .ec(.p256): [.es256]
        case .ec(.p384): [.es384]
        case .ec: []
        }
    }
}
