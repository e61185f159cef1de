internal import COpenSSL

/// An RSA or EC private key loaded from PEM, used to sign JWS tokens (dev tokens, service-account assertions).
public final class PrivateKey: Sendable {
    private let key: EVPKey

    public var kind: KeyKind { key.kind }

    /// Loads PKCS#8 (`BEGIN PRIVATE KEY`) or traditional (`BEGIN RSA PRIVATE KEY`, `BEGIN EC PRIVATE KEY`) PEM.
    /// Encrypted keys are refused.
    public init(pem: String) throws(CryptoError) {
        let pkey = try pem.withUTF8Bytes { (bytes) throws(CryptoError) -> OpaquePointer in
            guard let pkey = pc_pkey_read_private(bytes.baseAddress, bytes.count) else {
                throw OpenSSL.error(.invalidKey, "reading a PEM private key")
            }
            return pkey
        }
        key = try EVPKey(taking: pkey, context: "reading a PEM private key")
    }

    private init(key: EVPKey) { self.key = key }

    /// A fresh RSA key (tests, dev setups: `portcullis token` users without a key file).
    public static func generateRSA(bits: Int = 2048) throws(CryptoError) -> PrivateKey {
        guard bits >= 2048, bits <= 16384, let pkey = pc_pkey_generate_rsa(bits) else {
            throw OpenSSL.error(.operationFailed, "generating an RSA key")
        }
        return PrivateKey(key: try EVPKey(taking: pkey, context: "generating an RSA key"))
    }

    /// A fresh EC key on `curve`.
    public static func generateEC(curve: ECCurve) throws(CryptoError) -> PrivateKey {
        guard let pkey = pc_pkey_generate_ec(curve.index) else {
            throw OpenSSL.error(.operationFailed, "generating an EC key")
        }
        return PrivateKey(key: try EVPKey(taking: pkey, context: "generating an EC key"))
    }

    /// The key as unencrypted PKCS#8 PEM (to hand to a file; treat as secret).
    public func privateKeyPEM() throws(CryptoError) -> String { try key.privatePEM() }

    /// The matching public key as SPKI PEM.
    public func publicKeyPEM() throws(CryptoError) -> String { try key.publicPEM() }

    /// Signs SHA-2(`data`) with `algorithm`: PKCS#1 v1.5 for RS*, and for ES* the raw fixed-width R || S that
    /// JWS requires (not DER).
    public func sign(_ data: some Sequence<UInt8>, algorithm: SigningAlgorithm) throws(CryptoError) -> [UInt8] {
        try key.check(algorithm)
        let der = try data.withBytes { bytes in Result { () throws(CryptoError) in try digestSign(bytes, algorithm) } }
            .get()
        guard let width = algorithm.ecFieldWidth else { return der }
        var raw = [UInt8](repeating: 0, count: 2 * width)
        let ok = raw.withUnsafeMutableBufferPointer { out in
            der.withUnsafeBufferPointer { pc_ecdsa_der_to_raw($0.baseAddress, $0.count, out.baseAddress, Int32(width)) }
        }
        guard ok == 1 else { throw OpenSSL.error(.operationFailed, "converting an ECDSA signature") }
        return raw
    }

    private func digestSign(_ data: UnsafeRawBufferPointer, _ algorithm: SigningAlgorithm) throws(CryptoError)
        -> [UInt8]
    {
        guard let ctx = EVP_MD_CTX_new() else { throw OpenSSL.error(.operationFailed, "signing") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, algorithm.digest.md, nil, key.pkey) == 1 else {
            throw OpenSSL.error(.operationFailed, "initialising \(algorithm.rawValue) signing")
        }
        let input = data.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, input, data.count) == 1 else {
            throw OpenSSL.error(.operationFailed, "\(algorithm.rawValue) signing")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = signature.withUnsafeMutableBufferPointer {
            EVP_DigestSign(ctx, $0.baseAddress, &length, input, data.count)
        }
        guard ok == 1 else { throw OpenSSL.error(.operationFailed, "\(algorithm.rawValue) signing") }
        signature.removeSubrange(length...)
        return signature
    }
}
