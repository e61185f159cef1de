import Crypto
public import PortcullisCore

/// Mints development tokens (`portcullis token`): a JWT signed with a local RSA/EC private key or an HMAC
/// secret, so users of `make run` can try authenticated calls. Not for production identity.
public enum DevToken {
    /// Signs `{claims…, sub: uid, iat: now, exp: now + ttl, iss?, aud?}` with `algorithm` (RS256/384/512,
    /// ES256/384 with `signingKeyPEM`; HS256/384/512 with `hmacSecret`). `uid`, `now`, `ttlSeconds` and a non-nil
    /// `issuer`/`audience` win over the same names in `claims`.
    public static func mint(
        signingKeyPEM: String?, hmacSecret: [UInt8]?, algorithm: String, keyID: String?, uid: String,
        claims: [String: JSONValue], ttlSeconds: Int, issuer: String?, audience: String?, now: Timestamp
    ) throws(AuthError) -> String {
        guard let alg = JWTAlgorithm(rawValue: algorithm.uppercased()) else {
            throw AuthError(.algorithmNotAllowed, "unsupported algorithm \(algorithm)")
        }
        guard !uid.isEmpty, uid.unicodeScalars.count <= 128 else {
            throw AuthError(.badSubject, "uid must be 1–128 characters")
        }
        guard ttlSeconds > 0 else { throw AuthError(.expired, "ttl must be positive") }
        var header: [String: JSONValue] = ["alg": .string(alg.rawValue), "typ": .string("JWT")]
        if let keyID { header["kid"] = .string(keyID) }
        var payload = claims
        let iat = now.secondsSinceEpoch
        payload["sub"] = .string(uid)
        payload["iat"] = .int(iat)
        payload["exp"] = .int(iat + Int64(ttlSeconds))
        if let issuer { payload["iss"] = .string(issuer) }
        if let audience { payload["aud"] = .string(audience) }
        let signingInput =
            Base64URL.encode(Array(JSONValue.object(header).encoded().utf8)) + "."
            + Base64URL.encode(Array(JSONValue.object(payload).encoded().utf8))
        let signature: [UInt8]
        if let digest = alg.hmacDigest {
            guard let hmacSecret, !hmacSecret.isEmpty else {
                throw AuthError(.algorithmNotAllowed, "\(alg.rawValue) needs an HMAC secret")
            }
            signature = HMAC.compute(digest, key: hmacSecret, data: Array(signingInput.utf8))
        } else {
            guard let signingKeyPEM, let signing = alg.signing else {
                throw AuthError(.algorithmNotAllowed, "\(alg.rawValue) needs a private key")
            }
            do {
                signature = try PrivateKey(pem: signingKeyPEM).sign(Array(signingInput.utf8), algorithm: signing)
            } catch {
                throw AuthError(.algorithmNotAllowed, "cannot sign: \(error)")
            }
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
