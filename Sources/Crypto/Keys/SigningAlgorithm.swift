/// Asymmetric JWS signature algorithms (RFC 7518 §3.3, §3.4), all over SHA-2.
public enum SigningAlgorithm: String, Sendable, CaseIterable {
    case rs256 = "RS256", rs384 = "RS384", rs512 = "RS512"
    case es256 = "ES256", es384 = "ES384"

    var digest: DigestKind {
        switch self {
        case .rs256, .es256: .sha256
        case .rs384, .es384: .sha384
        case .rs512: .sha512
        }
    }

    /// Byte width of each of R and S in the raw JWS form, or nil for RSA.
    var ecFieldWidth: Int? {
        switch self {
        case .es256: 32
        case .es384: 48
        default: nil
        }
    }

    /// The curve an ES algorithm requires.
    var ecCurve: ECCurve? {
        switch self {
        case .es256: .p256
        case .es384: .p384
        default: nil
        }
    }
}

/// Named elliptic curves we accept in keys.
public enum ECCurve: String, Sendable, CaseIterable {
    case p256 = "P-256", p384 = "P-384", p521 = "P-521"

    var index: Int32 {
        switch self {
        case .p256: 0
        case .p384: 1
        case .p521: 2
        }
    }

    /// Byte length of one coordinate.
    public var coordinateByteCount: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }

    init?(bits: Int32) {
        switch bits {
        case 256: self = .p256
        case 384: self = .p384
        case 521: self = .p521
        default: return nil
        }
    }
}

/// What kind of asymmetric key a PEM holds.
public enum KeyKind: Sendable, Equatable {
    case rsa(bits: Int)
    case ec(ECCurve)
}
