/// Where the embedded backend keeps things under its directory. Object names never appear in a path.
///
/// ```
/// DIR/index.sqlite          object index, staging sessions, counters (WAL mode)
/// DIR/lock                  flock: shared while open; exclusive only for start-up garbage collection
/// DIR/tmp/<random>          bodies being received
/// DIR/blobs/<bucket hash>/<blob id>   immutable object bytes, one file per generation
/// DIR/staging/<staging id>  resumable-upload bytes
/// ```
struct DirectoryLayout: Sendable {
    let root: String

    var index: String { root + "/index.sqlite" }
    var lockFile: String { root + "/lock" }
    var tmp: String { root + "/tmp" }
    var blobs: String { root + "/blobs" }
    var staging: String { root + "/staging" }

    func newTempFile() -> String { tmp + "/" + FileSystem.randomIdentifier() }

    func blobDirectory(bucket: String) -> String { blobs + "/" + Self.bucketHash(bucket) }

    func blobFile(bucket: String, blobID: Int64) -> String { blobDirectory(bucket: bucket) + "/" + String(blobID) }

    func stagingFile(_ id: String) -> String { staging + "/" + id }

    /// FNV-1a 64 of the bucket name in hex: a stable directory name that is not the bucket name itself.
    static func bucketHash(_ bucket: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bucket.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A staging id is 32 lowercase hex digits; anything else never reaches the file system.
    static func isStagingID(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
