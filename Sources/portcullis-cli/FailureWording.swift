import PortcullisCore
import StorageClient

/// A failed server call together with the `gs://` URL it was about, so the message can name it the way ops
/// tools do: `permission denied: gs://b/x`, `bucket not found: b`, `not found: gs://b/x`.
struct TargetedFailure: Error {
    let target: String
    let error: StorageError

    /// The one line `portcullis-cli` prints (after its `portcullis-cli: ` prefix).
    var line: String { FailureWording.line(error, target: target) }
}

enum FailureWording {
    /// 403 → permission denied; a 404 whose message names the bucket → bucket not found (with the bucket);
    /// any other 404 → not found; everything else the server's message with code and status.
    static func line(_ error: StorageError, target: String) -> String {
        switch error.httpStatus {
        case 403?: return "permission denied: \(target)"
        case 401?: return "not authenticated (give --token, --token-file or --admin-key): \(target)"
        case 404? where isBucketMissing(error):
            return "bucket not found: \(bucketName(of: target))"
        case 404?: return "not found: \(target)"
        default: return "\(PortcullisCLI.describe(error)): \(target)"
        }
    }

    /// The gateway's missing-bucket answer says `Bucket NAME not found.`; a missing object's never starts so.
    static func isBucketMissing(_ error: StorageError) -> Bool {
        error.message.utf8.starts(with: "Bucket ".utf8) && error.message.hasSuffix("not found.")
    }

    static func bucketName(of target: String) -> String {
        guard let rest = target.bytesRemovingPrefix("gs://") else { return target }
        return rest.bytesCut(at: UInt8(ascii: "/"))?.before ?? rest
    }
}

/// Runs `body`, tagging a `StorageError` it throws with `target` (a `gs://` URL) for the failure line.
func on<T>(_ target: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as StorageError {
        throw TargetedFailure(target: target, error: error)
    }
}
