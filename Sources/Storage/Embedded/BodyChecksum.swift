import Crypto

/// The checksums every stored object carries, computed incrementally as its bytes pass.
///
/// The one seam between the embedded backend and the hash implementations (`Crypto`'s MD5 over OpenSSL EVP
/// and its SSE4.2 CRC32C): `update` sees every byte in order exactly once, `finish` is called once.
struct BodyChecksum: Sendable {
    private var md5 = MD5()
    private var crc = CRC32C()
    private(set) var byteCount: Int64 = 0

    init() {}

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        md5.update(bytes)
        crc.update(bytes)
        byteCount += Int64(bytes.count)
    }

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The final digests; call once, after the last `update`.
    func finish() -> ObjectChecksums {
        ObjectChecksums(md5: md5.finalize(), crc32c: crc.finalize(), size: byteCount)
    }
}

/// Finished checksums of one body, in the encodings `ObjectMetadata` stores.
struct ObjectChecksums: Sendable, Equatable {
    let md5: [UInt8]
    let crc32c: UInt32
    let size: Int64

    /// Base64 of the 16-byte digest (`md5Hash`).
    var md5Base64: String { Base64.encode(md5) }
    /// Base64 of the big-endian CRC32C (`crc32c`), as GCS reports it.
    var crc32cBase64: String {
        Base64.encode([
            UInt8(crc32c >> 24), UInt8((crc32c >> 16) & 0xFF), UInt8((crc32c >> 8) & 0xFF),
            UInt8(crc32c & 0xFF),
        ])
    }
}
