internal import COpenSSL

/// Owns one `EVP_PKEY`. Keys are immutable once loaded and OpenSSL allows concurrent use of one key from
/// several threads (each operation makes its own context), hence `@unchecked Sendable`.
final class EVPKey: @unchecked Sendable {
    let pkey: OpaquePointer
    let kind: KeyKind

    /// Takes ownership of `pkey`; fails for key types other than RSA and EC on a known curve.
    init(taking pkey: OpaquePointer, context: String) throws(CryptoError) {
        self.pkey = pkey
        switch pc_pkey_kind(pkey) {
        case 1:
            kind = .rsa(bits: Int(EVP_PKEY_get_bits(pkey)))
        case 2:
            guard let curve = ECCurve(bits: EVP_PKEY_get_bits(pkey)) else {
                throw CryptoError(.invalidKey, "\(context): unsupported elliptic curve")
            }
            kind = .ec(curve)
        default:
            throw CryptoError(.invalidKey, "\(context): only RSA and EC keys are supported")
        }
    }

    deinit { EVP_PKEY_free(pkey) }

    /// The public half as SPKI PEM (`-----BEGIN PUBLIC KEY-----`).
    func publicPEM() throws(CryptoError) -> String {
        guard let bio = pc_pkey_public_pem(pkey) else { throw OpenSSL.error(.operationFailed, "writing a public key") }
        defer { BIO_free(bio) }
        var data: UnsafePointer<CChar>?
        let length = pc_bio_mem_data(bio, &data)
        guard let data, length > 0 else { throw OpenSSL.error(.operationFailed, "writing a public key") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The private key as unencrypted PKCS#8 PEM.
    func privatePEM() throws(CryptoError) -> String {
        guard let bio = pc_pkey_private_pem(pkey) else {
            throw OpenSSL.error(.operationFailed, "writing a private key")
        }
        defer { BIO_free(bio) }
        var data: UnsafePointer<CChar>?
        let length = pc_bio_mem_data(bio, &data)
        guard let data, length > 0 else { throw OpenSSL.error(.operationFailed, "writing a private key") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    func check(_ algorithm: SigningAlgorithm) throws(CryptoError) {
        switch (kind, algorithm.ecCurve) {
        case (.rsa, nil): return
        case (.ec(let curve), let wanted?) where curve == wanted: return
        default: throw CryptoError(.keyAlgorithmMismatch, "\(algorithm.rawValue) cannot be used with this \(kind) key")
        }
    }
}

extension String {
    /// Runs `body` over the UTF-8 bytes of the string.
    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws(CryptoError) -> R) throws(CryptoError) -> R {
        var copy = self
        let result = copy.withUTF8 { buffer in Result { () throws(CryptoError) -> R in try body(buffer) } }
        return try result.get()
    }
}
