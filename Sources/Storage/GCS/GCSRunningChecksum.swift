import Crypto
import PortcullisCore

/// MD5 and CRC32C of a resumable upload's bytes so far, in a form that survives between requests (and
/// instances): `encoded` goes into the upload's record, `init(encoded:)` continues it. So `finalize` knows the
/// object's hashes before GCS commits it: a wrong declared MD5 is refused with the upload still active,
/// `beforeCommit` sees the true hashes, and GCS is asked to verify them (`X-Goog-Hash`) on the final request.
///
/// OpenSSL's EVP contexts cannot be exported, hence `Crypto.ResumableMD5`.
struct GCSRunningChecksum: Sendable, Equatable {
    private var md5 = ResumableMD5()
    private var crc: UInt32 = CRC32C().finalize()

    init() {}

    var byteCount: Int64 { Int64(md5.byteCount) }

    mutating func update(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        md5.update(bytes)
        var running = CRC32C(resumingFrom: crc)
        running.update(bytes)
        crc = running.finalize()
    }

    /// Base64 of the MD5 digest and of the big-endian CRC32C, as GCS reports them.
    var digests: (md5: String, crc32c: String) {
        (
            Base64.encode(md5.finalized()),
            Base64.encode([UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)])
        )
    }

    /// `<crc32c hex>-<base64url MD5 state>`.
    var encoded: String {
        String(crc, radix: 16) + "-" + Base64URL.encode(md5.state)
    }

    init?(encoded: some StringProtocol) {
        let parts = encoded.bytesSplit(separator: UInt8(ascii: "-"), maxSplits: 1)
        guard parts.count == 2, let crc = UInt32(parts[0], radix: 16), let state = Base64URL.decode(parts[1]),
            let md5 = ResumableMD5(state: state)
        else { return nil }
        self.crc = crc
        self.md5 = md5
    }
}
