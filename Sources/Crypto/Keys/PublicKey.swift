internal import COpenSSL

/// An RSA or EC public key, normalised to SPKI PEM (the one form libjwt and every other consumer accepts).
///
/// Built from PEM (SPKI, PKCS#1 or an X.509 certificate) or from JWK components. Construction validates the key
/// with OpenSSL; `pem` is then canonical, so two equal keys have equal `pem` strings.
public final class PublicKey: Sendable {
    private let key: EVPKey
    /// SPKI PEM (`-----BEGIN PUBLIC KEY-----`), newline-terminated.
    public let pem: String

    public var kind: KeyKind { key.kind }

    private init(key: EVPKey) throws(CryptoError) {
        self.key = key
        self.pem = try key.publicPEM()
    }

    /// Reads `BEGIN PUBLIC KEY` (SPKI), `BEGIN RSA PUBLIC KEY` (PKCS#1) or `BEGIN CERTIFICATE` (the certificate's
    /// subject key; validity dates and issuer are not checked — the certificate is only a key container here).
    public convenience init(pem text: String) throws(CryptoError) {
        let isCertificate = text.contains("-----BEGIN CERTIFICATE-----")
        let pkey = try text.withUTF8Bytes { (bytes) throws(CryptoError) -> OpaquePointer in
            let loaded =
                isCertificate
                ? pc_pkey_from_certificate(bytes.baseAddress, bytes.count)
                : pc_pkey_read_public(bytes.baseAddress, bytes.count)
            guard let loaded else {
                throw OpenSSL.error(isCertificate ? .invalidCertificate : .invalidKey, "reading a PEM public key")
            }
            return loaded
        }
        try self.init(key: EVPKey(taking: pkey, context: "reading a PEM public key"))
    }

    /// An RSA key from a JWK's big-endian `n` (modulus) and `e` (exponent). Moduli under 2048 bits are refused.
    public convenience init(rsaModulus n: [UInt8], exponent e: [UInt8]) throws(CryptoError) {
        let modulus = n.drop(while: { $0 == 0 })
        guard modulus.count >= 256, modulus.count <= 2048, !e.isEmpty, e.count <= 8 else {
            throw CryptoError(.invalidKey, "RSA JWK: modulus must be 2048–16384 bits and the exponent at most 8 bytes")
        }
        let pkey = Array(modulus).withUnsafeBufferPointer { nb in
            e.withUnsafeBufferPointer { eb in pc_pkey_from_rsa(nb.baseAddress, nb.count, eb.baseAddress, eb.count) }
        }
        guard let pkey else { throw OpenSSL.error(.invalidKey, "building an RSA key from a JWK") }
        try self.init(key: EVPKey(taking: pkey, context: "building an RSA key from a JWK"))
    }

    /// An EC key from a JWK's `crv`, `x` and `y`; the point must lie on the curve.
    public convenience init(curve: ECCurve, x: [UInt8], y: [UInt8]) throws(CryptoError) {
        let width = curve.coordinateByteCount
        guard x.count == width, y.count == width else {
            throw CryptoError(.invalidKey, "EC JWK: \(curve.rawValue) coordinates must be \(width) bytes")
        }
        let point = [0x04] + x + y
        let pkey = point.withUnsafeBufferPointer { pc_pkey_from_ec(curve.index, $0.baseAddress, $0.count) }
        guard let pkey else { throw OpenSSL.error(.invalidKey, "building an EC key from a JWK") }
        try self.init(key: EVPKey(taking: pkey, context: "building an EC key from a JWK"))
    }

    /// SPKI PEM for a JWK's RSA components (`PublicKey(rsaModulus:exponent:).pem`).
    public static func pem(fromJWKModulus n: [UInt8], exponent e: [UInt8]) throws(CryptoError) -> String {
        try PublicKey(rsaModulus: n, exponent: e).pem
    }

    /// SPKI PEM for a JWK's EC components.
    public static func pem(fromJWKCurve curve: ECCurve, x: [UInt8], y: [UInt8]) throws(CryptoError) -> String {
        try PublicKey(curve: curve, x: x, y: y).pem
    }

    /// Verifies a JWS-style signature (raw R || S for ES*) over `data`. False for any mismatch or malformed
    /// signature, and for an algorithm that does not fit this key.
    public func verify(signature: some Sequence<UInt8>, data: some Sequence<UInt8>, algorithm: SigningAlgorithm) -> Bool
    {
        do { try key.check(algorithm) } catch { return false }
        var sig = Array(signature)
        if let width = algorithm.ecFieldWidth {
            guard sig.count == 2 * width else { return false }
            var der = [UInt8](repeating: 0, count: 2 * width + 16)
            let length = der.withUnsafeMutableBufferPointer { out in
                sig.withUnsafeBufferPointer {
                    pc_ecdsa_raw_to_der($0.baseAddress, Int32(width), out.baseAddress, Int32(out.count))
                }
            }
            guard length > 0 else { pc_err_clear(); return false }
            sig = Array(der.prefix(Int(length)))
        }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx); pc_err_clear() }
        guard EVP_DigestVerifyInit(ctx, nil, algorithm.digest.md, nil, key.pkey) == 1 else { return false }
        return data.withBytes { d in
            sig.withUnsafeBufferPointer { s in
                EVP_DigestVerify(
                    ctx, s.baseAddress, s.count, d.baseAddress?.assumingMemoryBound(to: UInt8.self), d.count) == 1
            }
        }
    }
}

/// X.509 helpers: certificates are only containers for keys here.
public enum Certificate {
    /// The SPKI public-key PEM of the (first) certificate in `pem`
    /// (PEM_read_bio_X509 → X509_get0_pubkey → PEM_write_bio_PUBKEY).
    public static func publicKeyPEM(fromCertificatePEM pem: String) throws(CryptoError) -> String {
        guard pem.contains("-----BEGIN CERTIFICATE-----") else {
            throw CryptoError(.invalidCertificate, "no PEM certificate found")
        }
        return try PublicKey(pem: pem).pem
    }
}
