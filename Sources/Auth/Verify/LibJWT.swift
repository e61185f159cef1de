internal import CJWT

/// The libjwt engine (see `SignatureEngine.libJWT`), wrapped so that its unsafe defaults cannot bite:
/// it is only ever called with a non-empty key and the algorithm it reports is compared with the pinned one.
enum LibJWT {
    /// True when libjwt verifies `token` with `key` and reports exactly `algorithm`.
    static func verify(token: [UInt8], key: [UInt8], algorithm: JWTAlgorithm) -> Bool {
        // A NULL or empty key makes jwt_decode accept the token unverified: never call it that way.
        guard !key.isEmpty, key.count < Int(Int32.max) else { return false }
        var text = token
        text.append(0)
        var jwt: OpaquePointer?
        let rc = text.withUnsafeBufferPointer { t in
            t.withMemoryRebound(to: CChar.self) { chars in
                key.withUnsafeBufferPointer { k in jwt_decode(&jwt, chars.baseAddress, k.baseAddress, Int32(k.count)) }
            }
        }
        defer { if let jwt { jwt_free(jwt) } }
        guard rc == 0, let jwt else { return false }
        return jwt_get_alg(jwt).rawValue == algorithm.libJWTValue
    }
}

extension JWTAlgorithm {
    var libJWTValue: UInt32 {
        switch self {
        case .hs256: JWT_ALG_HS256.rawValue
        case .hs384: JWT_ALG_HS384.rawValue
        case .hs512: JWT_ALG_HS512.rawValue
        case .rs256: JWT_ALG_RS256.rawValue
        case .rs384: JWT_ALG_RS384.rawValue
        case .rs512: JWT_ALG_RS512.rawValue
        case .es256: JWT_ALG_ES256.rawValue
        case .es384: JWT_ALG_ES384.rawValue
        }
    }
}
