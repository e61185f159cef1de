internal import COpenSSL

/// Owns one `EVP_MD_CTX`. Shared between copies of a hasher value until one of them mutates (copy-on-write).
final class DigestContext: @unchecked Sendable {
    // @unchecked: the context is only mutated through a uniquely referenced box (see EVPHasher.update).
    let ctx: OpaquePointer
    let kind: DigestKind

    init(kind: DigestKind) {
        guard let ctx = EVP_MD_CTX_new() else { fatalError("OpenSSL: out of memory") }
        guard EVP_DigestInit_ex(ctx, kind.md, nil) == 1 else { fatalError("OpenSSL: digest init failed") }
        self.ctx = ctx
        self.kind = kind
    }

    init(copying other: DigestContext) {
        guard let ctx = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(ctx, other.ctx) == 1 else {
            fatalError("OpenSSL: digest copy failed")
        }
        self.ctx = ctx
        self.kind = other.kind
    }

    deinit { EVP_MD_CTX_free(ctx) }
}

/// Streaming EVP digest with value semantics; the engine behind `SHA256` and `MD5`.
struct EVPHasher: Sendable {
    private var box: DigestContext

    init(kind: DigestKind) { box = DigestContext(kind: kind) }

    @inline(__always)
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if !isKnownUniquelyReferenced(&box) { box = DigestContext(copying: box) }
        guard EVP_DigestUpdate(box.ctx, bytes.baseAddress, bytes.count) == 1 else {
            fatalError("OpenSSL: digest update failed")
        }
    }

    /// The digest of everything so far; the hasher itself is left untouched and may keep going.
    func finalize() -> [UInt8] {
        let scratch = DigestContext(copying: box)
        return [UInt8](unsafeUninitializedCapacity: box.kind.byteCount) { buffer, count in
            var length: UInt32 = 0
            guard EVP_DigestFinal_ex(scratch.ctx, buffer.baseAddress, &length) == 1 else {
                fatalError("OpenSSL: digest final failed")
            }
            count = Int(length)
        }
    }

    /// One-shot digest into caller memory (at least `kind.byteCount` bytes). SHA-256 (token cache keys, on every
    /// authenticated request) allocates nothing; the other kinds go through `EVP_Digest`, which allocates a
    /// context per call.
    static func hash(_ kind: DigestKind, _ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= kind.byteCount, "digest output buffer too small")
        if kind == .sha256 {
            pc_sha256_oneshot(bytes.baseAddress, bytes.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            return
        }
        var length: UInt32 = 0
        guard EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, &length, kind.md, nil) == 1 else {
            fatalError("OpenSSL: digest failed")
        }
    }

    /// One-shot digest without a context allocation of our own.
    static func hash(_ kind: DigestKind, _ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: kind.byteCount) { buffer, count in
            var length: UInt32 = 0
            guard EVP_Digest(bytes.baseAddress, bytes.count, buffer.baseAddress, &length, kind.md, nil) == 1 else {
                fatalError("OpenSSL: digest failed")
            }
            count = Int(length)
        }
    }
}
