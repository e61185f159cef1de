internal import COpenSSL

/// AES-256-GCM authenticated encryption (RFC 5116 AEAD) through OpenSSL EVP.
///
/// Used for capabilities that travel in URLs and must be unreadable as well as unforgeable (resumable upload
/// URLs carry the uploader's claims). The nonce is 12 random bytes per message: with a 96-bit random nonce a
/// key may seal about 2^32 messages before a repeat becomes plausible, far beyond what one signing key seals
/// before rotation. Output layout: `nonce (12) ‖ ciphertext ‖ tag (16)`.
public struct AEADKey: Sendable {
    static let keyBytes = 32
    public static let nonceBytes = 12
    public static let tagBytes = 16
    /// Bytes `seal` adds to the plaintext.
    public static let overhead = nonceBytes + tagBytes

    private let key: [UInt8]

    /// A key of exactly 32 bytes (derive one with `HKDF.sha256`).
    public init(_ key: [UInt8]) {
        precondition(key.count == Self.keyBytes, "AES-256-GCM needs a 32-byte key")
        self.key = key
    }

    /// Encrypts `plaintext`, authenticating it together with `associatedData` (which is not encrypted and must
    /// be presented again, byte for byte, to open).
    public func seal(_ plaintext: [UInt8], associatedData: [UInt8] = []) -> [UInt8] {
        let nonce = SecureRandom.bytes(Self.nonceBytes)
        var out = nonce
        out.reserveCapacity(Self.overhead + plaintext.count)
        guard let ctx = EVP_CIPHER_CTX_new() else { fatalError("OpenSSL: EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var length: Int32 = 0
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: Self.tagBytes)
        let ok =
            key.withUnsafeBufferPointer { k in
                nonce.withUnsafeBufferPointer { n in
                    EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, k.baseAddress, n.baseAddress) == 1
                }
            }
            && (associatedData.isEmpty
                || associatedData.withUnsafeBufferPointer { a in
                    EVP_EncryptUpdate(ctx, nil, &length, a.baseAddress, Int32(a.count)) == 1
                })
            && plaintext.withUnsafeBufferPointer { p in
                ciphertext.withUnsafeMutableBufferPointer { c in
                    EVP_EncryptUpdate(
                        ctx, c.baseAddress, &length, p.baseAddress ?? UnsafePointer(c.baseAddress!),
                        Int32(p.count)) == 1
                }
            }
        guard ok else { fatalError("OpenSSL: AES-GCM encryption failed: \(OpenSSL.takeError() ?? "unknown")") }
        var produced = Int(length)
        var finalLength: Int32 = 0
        let finished =
            ciphertext.withUnsafeMutableBufferPointer { c in
                EVP_EncryptFinal_ex(ctx, c.baseAddress! + produced, &finalLength) == 1
            }
            && tag.withUnsafeMutableBytes { t in
                EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(Self.tagBytes), t.baseAddress) == 1
            }
        guard finished else { fatalError("OpenSSL: AES-GCM finalisation failed: \(OpenSSL.takeError() ?? "unknown")") }
        produced += Int(finalLength)
        out.append(contentsOf: ciphertext[..<produced])
        out.append(contentsOf: tag)
        return out
    }

    /// Decrypts what `seal` produced; nil when the box was altered, is truncated, or `associatedData` differs.
    public func open(_ box: [UInt8], associatedData: [UInt8] = []) -> [UInt8]? {
        guard box.count >= Self.overhead else { return nil }
        let nonce = Array(box[..<Self.nonceBytes])
        let ciphertext = Array(box[Self.nonceBytes..<(box.count - Self.tagBytes)])
        var tag = Array(box[(box.count - Self.tagBytes)...])
        guard let ctx = EVP_CIPHER_CTX_new() else { fatalError("OpenSSL: EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var length: Int32 = 0
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        let ok =
            key.withUnsafeBufferPointer { k in
                nonce.withUnsafeBufferPointer { n in
                    EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, k.baseAddress, n.baseAddress) == 1
                }
            }
            && (associatedData.isEmpty
                || associatedData.withUnsafeBufferPointer { a in
                    EVP_DecryptUpdate(ctx, nil, &length, a.baseAddress, Int32(a.count)) == 1
                })
            && ciphertext.withUnsafeBufferPointer { c in
                plaintext.withUnsafeMutableBufferPointer { p in
                    EVP_DecryptUpdate(
                        ctx, p.baseAddress, &length, c.baseAddress ?? UnsafePointer(p.baseAddress!),
                        Int32(c.count)) == 1
                }
            }
            && tag.withUnsafeMutableBytes { t in
                EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagBytes), t.baseAddress) == 1
            }
        guard ok else {
            pc_err_clear()
            return nil
        }
        var produced = Int(length)
        var finalLength: Int32 = 0
        let verified = plaintext.withUnsafeMutableBufferPointer { p in
            EVP_DecryptFinal_ex(ctx, p.baseAddress! + produced, &finalLength) == 1
        }
        guard verified else {
            pc_err_clear()
            return nil
        }
        produced += Int(finalLength)
        return Array(plaintext[..<produced])
    }
}

/// HKDF with HMAC-SHA256 (RFC 5869): turns one secret into independent keys, one per purpose.
public enum HKDF {
    /// `length` bytes (at most 255 × 32) of key material for `info`, from `secret` and an optional `salt`.
    public static func sha256(secret: [UInt8], salt: [UInt8] = [], info: [UInt8], length: Int) -> [UInt8] {
        precondition(length > 0 && length <= 255 * 32, "HKDF-SHA256 output length out of range")
        let prk = HMAC.sha256(key: salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt, data: secret)
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            block = HMAC.sha256(key: prk, data: block + info + [counter])
            output.append(contentsOf: block)
            counter += 1
        }
        return Array(output.prefix(length))
    }
}
