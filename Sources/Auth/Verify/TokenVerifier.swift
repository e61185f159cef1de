import Crypto
public import PortcullisCore

/// A token that passed every check.
public struct VerifiedToken: Sendable {
    public let principal: Principal
    /// Unix seconds after which the token is no longer accepted (`exp` + leeway): the cache keeps it until then.
    public let validUntil: Int64
    /// The verifying key's fingerprint (cache invalidation on rotation).
    public let keyFingerprint: String
}

/// Verifies one JWS compact token against a key set, in the order that does not trust the token
/// (libjwt checks nothing itself): size → structure → unverified header (alg, kid only) → key selection with the
/// algorithm pinned to the key → signature → claims. Stateless and thread-safe.
public struct TokenVerifier: Sendable {
    public let configuration: AuthConfiguration
    private let hmacKey: VerificationKey?
    /// Upper bound on keys tried for a token whose `kid` names no key (PEM keys have no kid).
    static let maxAnonymousCandidates = 8

    public init(configuration: AuthConfiguration) {
        self.configuration = configuration
        if let secret = configuration.hmacSecret, !secret.isEmpty {
            hmacKey = VerificationKey(hmacSecret: secret)
        } else {
            hmacKey = nil
        }
    }

    public func verify(_ token: some Sequence<UInt8>, keys: KeySet, now: Timestamp) throws(AuthError) -> VerifiedToken {
        let bytes = Array(token)
        guard bytes.count <= configuration.maxTokenBytes else {
            throw AuthError(.oversize, "token longer than \(configuration.maxTokenBytes) bytes")
        }
        let parsed = try CompactToken.parse(bytes)
        let key = try verifySignature(parsed, keys: keys)
        let claims: [String: JSONValue]
        do {
            guard let object = try JSONValue.parse(parsed.payload).objectValue else {
                throw AuthError(.malformed, "payload is not a JSON object")
            }
            claims = object
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(.malformed, "payload is not valid JSON")
        }
        let (uid, validUntil) = try checkClaims(claims, now: now.secondsSinceEpoch)
        return VerifiedToken(
            principal: Principal(uid: uid, claims: claims), validUntil: validUntil,
            keyFingerprint: key.fingerprint)
    }

    /// Picks the key(s) the header allows and checks the signature with the pinned algorithm.
    private func verifySignature(_ token: CompactToken, keys: KeySet) throws(AuthError) -> VerificationKey {
        let algorithm = token.algorithm
        let candidates: [VerificationKey]
        if algorithm.isHMAC {
            guard let hmacKey else {
                throw AuthError(.algorithmNotAllowed, "\(algorithm.rawValue) needs a configured HMAC secret")
            }
            candidates = [hmacKey]
        } else {
            guard !keys.keys.isEmpty else { throw AuthError(.noKeys, "no verification keys are loaded") }
            if let kid = token.keyID, let key = keys.key(id: kid) {
                guard key.allowedAlgorithms.contains(algorithm) else {
                    throw AuthError(.algorithmNotAllowed, "\(algorithm.rawValue) is not allowed for this key")
                }
                candidates = [key]
            } else {
                var pool = keys.anonymous
                if pool.isEmpty && token.keyID == nil && keys.keys.count == 1 { pool = keys.keys }
                guard !pool.isEmpty else {
                    throw AuthError(
                        .unknownKey, token.keyID == nil ? "token has no kid" : "no key with the token's kid")
                }
                let usable = pool.filter { $0.allowedAlgorithms.contains(algorithm) }
                guard !usable.isEmpty else {
                    throw AuthError(
                        .algorithmNotAllowed, "\(algorithm.rawValue) is not allowed for the configured keys")
                }
                candidates = Array(usable.prefix(Self.maxAnonymousCandidates))
            }
        }
        for key in candidates where check(token, with: key) { return key }
        throw AuthError(.badSignature, "signature does not verify")
    }

    private func check(_ token: CompactToken, with key: VerificationKey) -> Bool {
        let algorithm = token.algorithm
        guard key.allowedAlgorithms.contains(algorithm) else { return false }
        switch configuration.signatureEngine {
        case .openSSL:
            switch key.material {
            case .publicKey(let publicKey):
                guard let signing = algorithm.signing else { return false }
                return publicKey.verify(signature: token.signature, data: token.signingInput, algorithm: signing)
            case .hmacSecret(let secret):
                guard let digest = algorithm.hmacDigest else { return false }
                return ConstantTime.equals(HMAC.compute(digest, key: secret, data: token.signingInput), token.signature)
            }
        case .libJWT:
            switch key.material {
            case .publicKey(let publicKey):
                guard !algorithm.isHMAC else { return false }
                return LibJWT.verify(token: token.text, key: Array(publicKey.pem.utf8), algorithm: algorithm)
            case .hmacSecret(let secret):
                guard algorithm.isHMAC else { return false }
                return LibJWT.verify(token: token.text, key: secret, algorithm: algorithm)
            }
        }
    }

    /// Registered-claim checks; returns the uid and the end of validity.
    func checkClaims(_ claims: [String: JSONValue], now: Int64) throws(AuthError) -> (uid: String, validUntil: Int64) {
        let leeway = Int64(max(0, configuration.leewaySeconds))
        guard let expValue = claims["exp"] else { throw AuthError(.malformed, "token has no exp") }
        guard let exp = Self.numericDate(expValue) else { throw AuthError(.malformed, "exp is not a number") }
        guard now < exp.addingSaturating(leeway) else { throw AuthError(.expired, "token expired") }
        if let nbfValue = claims["nbf"] {
            guard let nbf = Self.numericDate(nbfValue) else { throw AuthError(.malformed, "nbf is not a number") }
            guard nbf <= now.addingSaturating(leeway) else {
                throw AuthError(.notYetValid, "token is not valid yet (nbf)")
            }
        }
        if let iatValue = claims["iat"] {
            guard let iat = Self.numericDate(iatValue) else { throw AuthError(.malformed, "iat is not a number") }
            guard iat <= now.addingSaturating(leeway) else {
                throw AuthError(.issuedInFuture, "token issued in the future (iat)")
            }
        } else if configuration.requireAuthTime {
            throw AuthError(.malformed, "token has no iat")
        }
        if let issuer = configuration.issuer {
            guard claims["iss"]?.stringValue.bytesEqual(issuer) == true else {
                throw AuthError(.wrongIssuer, "issuer does not match")
            }
        }
        if let audience = configuration.audience {
            let matches: Bool
            switch claims["aud"] {
            case .string(let aud)?: matches = aud.bytesEqual(audience)
            case .array(let auds)?: matches = auds.contains { $0.stringValue?.bytesEqual(audience) == true }
            default: matches = false
            }
            guard matches else { throw AuthError(.wrongAudience, "audience does not match") }
        }
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.unicodeScalars.count <= 128 else {
            throw AuthError(.badSubject, "sub must be a non-empty string of at most 128 characters")
        }
        if configuration.requireAuthTime {
            guard let authTimeValue = claims["auth_time"], let authTime = Self.numericDate(authTimeValue) else {
                throw AuthError(.malformed, "token has no numeric auth_time")
            }
            guard authTime <= now.addingSaturating(leeway) else {
                throw AuthError(.authTimeInFuture, "auth_time is in the future")
            }
        }
        return (sub, exp.addingSaturating(leeway))
    }

    /// A NumericDate (RFC 7519 §2): integer or finite number of seconds, truncated toward negative infinity.
    static func numericDate(_ value: JSONValue) -> Int64? {
        switch value {
        case .int(let i): return i
        case .double(let d) where d.isFinite && abs(d) < 9e15: return Int64(d.rounded(.down))
        default: return nil
        }
    }
}

extension Int64 {
    func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
