internal import COpenSSL

/// HMAC (RFC 2104) one-shot functions.
public enum HMAC {
    /// The hash functions HMAC can run over (SHA-384/512 are here for JWT HS384/HS512, SHA-1 for V2 signed
    /// URLs signed with an HMAC key, which Google still accepts).
    public enum Digest: Sendable {
        case sha256, sha384, sha512, sha1
        var kind: DigestKind {
            switch self {
            case .sha256: .sha256
            case .sha384: .sha384
            case .sha512: .sha512
            case .sha1: .sha1
            }
        }
    }

    /// HMAC-SHA256 of `data` under `key` (32 bytes).
    public static func sha256(key: some Sequence<UInt8>, data: some Sequence<UInt8>) -> [UInt8] {
        compute(.sha256, key: key, data: data)
    }

    public static func compute(_ digest: Digest, key: some Sequence<UInt8>, data: some Sequence<UInt8>) -> [UInt8] {
        key.withBytes { k in data.withBytes { d in compute(digest, key: k, data: d) } }
    }

    public static func compute(_ digest: Digest, key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer) -> [UInt8] {
        let kind = digest.kind
        // OpenSSL wants a non-NULL key pointer even for an empty key.
        var empty: UInt8 = 0
        return withUnsafeMutablePointer(to: &empty) { emptyPointer in
            [UInt8](unsafeUninitializedCapacity: kind.byteCount) { buffer, count in
                var length: UInt32 = 0
                let keyPointer = key.count > 0 ? key.baseAddress! : UnsafeRawPointer(emptyPointer)
                guard
                    COpenSSL.HMAC(
                        kind.md, keyPointer, Int32(key.count),
                        data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count,
                        buffer.baseAddress, &length) != nil
                else { fatalError("OpenSSL: HMAC failed") }
                count = Int(length)
            }
        }
    }
}

final class MACContext: @unchecked Sendable {
    // @unchecked: mutated only through a uniquely referenced box (copy-on-write in HMACSHA256).
    let ctx: OpaquePointer

    init(key: UnsafeRawBufferPointer) {
        guard let ctx = EVP_MAC_CTX_new(OpenSSL.hmac),
            pc_hmac_init(
                ctx, DigestKind.sha256.rawValue, key.baseAddress?.assumingMemoryBound(to: UInt8.self),
                key.count) == 1
        else { fatalError("OpenSSL: HMAC init failed") }
        self.ctx = ctx
    }

    init(copying other: MACContext) {
        guard let ctx = EVP_MAC_CTX_dup(other.ctx) else { fatalError("OpenSSL: HMAC copy failed") }
        self.ctx = ctx
    }

    deinit { EVP_MAC_CTX_free(ctx) }
}

/// Streaming HMAC-SHA256 with value semantics: equal to `HMAC.sha256(key:data:)` over the concatenated input.
public struct HMACSHA256: Sendable {
    public static let byteCount = 32
    private var box: MACContext

    public init(key: some Sequence<UInt8>) { box = key.withBytes { MACContext(key: $0) } }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if !isKnownUniquelyReferenced(&box) { box = MACContext(copying: box) }
        guard EVP_MAC_update(box.ctx, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count) == 1 else {
            fatalError("OpenSSL: HMAC update failed")
        }
    }

    public mutating func update(_ bytes: some Sequence<UInt8>) { bytes.withBytes { update($0) } }

    /// The MAC of everything fed so far (the value stays usable).
    public func finalize() -> [UInt8] {
        let scratch = MACContext(copying: box)
        return [UInt8](unsafeUninitializedCapacity: Self.byteCount) { buffer, count in
            var length = 0
            guard EVP_MAC_final(scratch.ctx, buffer.baseAddress, &length, Self.byteCount) == 1 else {
                fatalError("OpenSSL: HMAC final failed")
            }
            count = length
        }
    }
}
