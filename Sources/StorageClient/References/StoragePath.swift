import Foundation
import PortcullisCore

/// A (bucket, object path) pair normalised the way the Firebase SDKs do it: empty segments are
/// dropped, so `a//b/` becomes `a/b`; the root is the empty path.
public struct StoragePath: Sendable, Hashable {
    public let bucket: String
    public let object: String

    public init(bucket: String, object: String) {
        self.bucket = bucket
        self.object = Self.normalize(object)
    }

    static func normalize(_ path: String) -> String {
        // By bytes: a name may hold a combining mark right after a `/`, one `Character` with it.
        path.bytesSplit(separator: UInt8(ascii: "/")).joined(separator: "/")
    }

    /// Parses `gs://bucket/path`, `http(s)://host/v0/b/bucket/o/path` (object encoded or not) and
    /// `https://storage.googleapis.com/bucket/path` (or `storage.cloud.google.com`).
    public static func parse(url string: String) throws(StorageError) -> StoragePath {
        if string.lowercased().hasPrefix("gs://") {
            let rest = String(decoding: string.utf8.dropFirst(5), as: UTF8.self)
            let (bucket, object) = rest.bytesCut(at: UInt8(ascii: "/")) ?? (rest, "")
            guard isValidBucket(bucket) else {
                throw StorageError(.invalidArgument, "Invalid bucket in URL: \(string)")
            }
            return StoragePath(bucket: bucket, object: object)
        }
        guard let components = URLComponents(string: string), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host
        else {
            throw StorageError(.invalidArgument, "Unsupported storage URL: \(string)")
        }
        // The raw (percent-encoded) path, split before decoding so an encoded %2F stays inside a segment.
        let segments = components.percentEncodedPath.bytesSplit(
            separator: UInt8(ascii: "/"), omittingEmptySubsequences: false
        ).dropFirst()
        let decoded = segments.map { String($0).removingPercentEncoding ?? String($0) }
        if decoded.count >= 3, decoded[0] == "v0", decoded[1] == "b" {
            let bucket = decoded[2]
            guard isValidBucket(bucket) else {
                throw StorageError(.invalidArgument, "Invalid bucket in URL: \(string)")
            }
            if decoded.count == 3 { return StoragePath(bucket: bucket, object: "") }
            guard decoded[3] == "o" else { throw StorageError(.invalidArgument, "Expected /o/ in URL: \(string)") }
            return StoragePath(bucket: bucket, object: decoded.dropFirst(4).joined(separator: "/"))
        }
        let cloudHosts = ["storage.googleapis.com", "storage.cloud.google.com"]
        if cloudHosts.contains(host.lowercased()), let bucket = decoded.first, isValidBucket(bucket) {
            return StoragePath(bucket: bucket, object: decoded.dropFirst().joined(separator: "/"))
        }
        throw StorageError(.invalidArgument, "Unsupported storage URL: \(string)")
    }

    static func isValidBucket(_ bucket: String) -> Bool {
        !bucket.isEmpty && bucket.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }
}
