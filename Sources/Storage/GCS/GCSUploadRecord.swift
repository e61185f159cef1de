import Crypto
import PortcullisCore

/// Our resumable-upload handle for a GCS bucket: `gcs1.<declared size or ->.<object digest>.<session URI>`.
///
/// The session URI is GCS's own resumable session (from `Location`); the declared size and a digest of
/// bucket/name bind the handle to its upload and object, so a handle replayed for another object is
/// `.notFound`. The Gateway seals the handle into the client's upload URL; it is still validated here
/// (defence in depth): the URI must point at the configured endpoint's upload path for this bucket, so a
/// forged handle can never make us send a request elsewhere.
struct GCSUploadHandle: Equatable {
    static let version = "gcs1"

    var declaredSize: Int64?
    var objectDigest: String
    var session: String

    var encoded: String {
        "\(Self.version).\(declaredSize.map(String.init) ?? "-").\(objectDigest).\(session)"
    }

    static func digest(_ object: ObjectPath) -> String {
        String(Base64URL.encode(SHA256.hash(Array("\(object.bucket)/\(object.name)".utf8))).prefix(22))
    }

    /// Parses `text` for `object`; nil when it is not a handle of ours for that object and session prefix.
    init?(parsing text: String, object: ObjectPath, sessionPrefix: String) {
        let parts = text.bytesSplit(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].bytesEqual(Self.version) else { return nil }
        if parts[1] == "-" {
            declaredSize = nil
        } else {
            guard let size = Int64(parts[1]), size >= 0 else { return nil }
            declaredSize = size
        }
        objectDigest = String(parts[2])
        session = String(parts[3])
        guard objectDigest.bytesEqual(Self.digest(object)), Self.isSession(session, prefix: sessionPrefix) else {
            return nil
        }
    }

    init(declaredSize: Int64?, object: ObjectPath, session: String) {
        self.declaredSize = declaredSize
        self.objectDigest = Self.digest(object)
        self.session = session
    }

    /// A session URI we are willing to call: under the configured endpoint's upload path for our bucket
    /// (`…/upload/storage/v1/b/BUCKET/o?…`), printable ASCII only (no header or request-line injection).
    static func isSession(_ uri: String, prefix: String) -> Bool {
        uri.bytesHasPrefix(prefix) && uri.utf8.count > prefix.utf8.count && uri.utf8.count <= 4096
            && uri.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

/// Where one resumable upload stands, kept as a small object in the bucket itself
/// (`.portcullis-staging/<digest of the session URI>`, hidden from listings), so any instance can continue the
/// upload with no shared state besides the bucket.
///
/// Why a record at all: GCS only persists non-final chunks in multiples of 256 KiB, while our protocol lets a
/// chunk (and always the last one) end anywhere; the unaligned tail (< 256 KiB) is held in the record until the
/// next chunk or finalize. The record also carries the running MD5/CRC32C of every staged byte, so finalize
/// knows the hashes before GCS commits. And the record, not a status query on the session, is what we read
/// back: a `Content-Range: bytes */*` query finalizes the upload on fake-gcs-server, and a finished or
/// cancelled session cannot be asked how it ended everywhere.
///
/// Encoding: one header line, then (active only) the tail bytes:
/// `pcs1 active <base> <checksum>\n<tail>` (GCS holds bytes `0..<base`; the checksum covers base + tail bytes),
/// `pcs1 cancelled\n`, `pcs1 final <size> <generation>\n`.
enum GCSUploadRecord: Equatable {
    case active(base: Int64, tail: [UInt8], checksum: GCSRunningChecksum)
    case cancelled
    case final(size: Int64, generation: Int64)

    static let prefix = "pcs1 "

    static func objectName(session: String) -> String {
        GCSBackend.stagingPrefix + String(Base64URL.encode(SHA256.hash(Array(session.utf8))).prefix(32))
    }

    var encoded: [UInt8] {
        switch self {
        case .active(let base, let tail, let checksum):
            Array("\(Self.prefix)active \(base) \(checksum.encoded)\n".utf8) + tail
        case .cancelled: Array("\(Self.prefix)cancelled\n".utf8)
        case .final(let size, let generation): Array("\(Self.prefix)final \(size) \(generation)\n".utf8)
        }
    }

    init?(decoding bytes: [UInt8]) {
        guard let newline = bytes.firstIndex(of: 0x0A), newline <= 256 else { return nil }
        let header = String(decoding: bytes[..<newline], as: UTF8.self)
        guard let rest = header.bytesRemovingPrefix(Self.prefix) else { return nil }
        let fields = rest.bytesSplit(separator: UInt8(ascii: " "))
        switch (fields.first, fields.count) {
        case ("active"?, 3):
            let tail = Array(bytes[(newline + 1)...])
            guard let base = Int64(fields[1]), base >= 0, let checksum = GCSRunningChecksum(encoded: fields[2]),
                checksum.byteCount == base + Int64(tail.count)
            else { return nil }
            self = .active(base: base, tail: tail, checksum: checksum)
        case ("cancelled"?, 1):
            self = .cancelled
        case ("final"?, 3):
            guard let size = Int64(fields[1]), let generation = Int64(fields[2]) else { return nil }
            self = .final(size: size, generation: generation)
        default:
            return nil
        }
    }
}
