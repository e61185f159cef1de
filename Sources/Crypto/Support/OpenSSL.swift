internal import COpenSSL

/// Process-wide OpenSSL handles, fetched once (an implicit fetch per `EVP_DigestInit` costs more than hashing
/// a small buffer in OpenSSL 3). Fetched algorithm objects are immutable and safe to share across threads.
enum OpenSSL {
    nonisolated(unsafe) static let sha256: OpaquePointer = fetch(0, "SHA256")
    nonisolated(unsafe) static let md5: OpaquePointer = fetch(1, "MD5")
    nonisolated(unsafe) static let sha384: OpaquePointer = fetch(2, "SHA384")
    nonisolated(unsafe) static let sha512: OpaquePointer = fetch(3, "SHA512")
    nonisolated(unsafe) static let sha1: OpaquePointer = fetch(4, "SHA1")
    nonisolated(unsafe) static let hmac: OpaquePointer = {
        guard let mac = pc_mac_fetch_hmac() else { fatalError("OpenSSL: HMAC is unavailable") }
        return mac
    }()

    private static func fetch(_ which: Int32, _ name: String) -> OpaquePointer {
        guard let md = pc_md_fetch(which) else { fatalError("OpenSSL: digest \(name) is unavailable") }
        return md
    }

    /// Takes (and clears) the calling thread's queued OpenSSL error, if any.
    static func takeError() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let had = buffer.withUnsafeMutableBufferPointer { pc_err_take($0.baseAddress!, $0.count) }
        guard had != 0 else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func error(_ kind: CryptoError.Kind, _ context: String) -> CryptoError {
        CryptoError(kind, context, openSSLMessage: takeError())
    }
}

/// Digests the rest of the module can name.
enum DigestKind: Int32, Sendable {
    case sha256 = 0, md5 = 1, sha384 = 2, sha512 = 3, sha1 = 4

    var md: OpaquePointer {
        switch self {
        case .sha256: OpenSSL.sha256
        case .md5: OpenSSL.md5
        case .sha384: OpenSSL.sha384
        case .sha512: OpenSSL.sha512
        case .sha1: OpenSSL.sha1
        }
    }

    var byteCount: Int {
        switch self {
        case .sha256: 32
        case .md5: 16
        case .sha384: 48
        case .sha512: 64
        case .sha1: 20
        }
    }
}

extension Sequence<UInt8> {
    /// Runs `body` over the bytes without copying when they are contiguous (arrays, slices), else over a copy.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let result = try withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(self).withUnsafeBytes(body)
    }
}
