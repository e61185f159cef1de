import PortcullisCore
import Synchronization

/// Presigned requests whose signature checked out, by every byte the check read: a presigned URL fetched again
/// (a player's range requests, a link handed to many readers) skips rebuilding its canonical request and the
/// hash and MAC over it. A hit is the same verification's answer, not a weaker one: the key holds the method, the
/// raw path and query (credential, date, lifetime, signed header names and the signature are all in it), every
/// signed header's values, the payload hash and the secret, each field length-prefixed so that no two different
/// requests share a key. Expiry and clock skew are checked on every request before this is asked, and only
/// successful checks are kept. Bounded: past `capacity` entries it starts over; keys longer than
/// `maxKeyBytes` are not kept.
final class S3VerifiedRequests: Sendable {
    /// A key's bytes, hashed in one pass (an `[UInt8]` hashes element by element).
    struct Key: Hashable, Sendable {
        let bytes: [UInt8]

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.bytes == rhs.bytes }

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    static let maxKeyBytes = 4096

    private let entries = Mutex<[Key: [UInt8]]>([:])
    private let capacity: Int

    init(capacity: Int = 1024) { self.capacity = capacity }

    /// The key of a presigned request's verification; nil when it would be too long to keep.
    static func key(
        _ request: S3SigV4.Request, signedHeaders: [String], payloadHash: String, secret: [UInt8]
    ) -> Key? {
        var out: [UInt8] = []
        out.reserveCapacity(256 + request.rawPath.utf8.count + (request.query?.utf8.count ?? 0))
        func field(_ bytes: some Collection<UInt8>) {
            let count = UInt32(truncatingIfNeeded: bytes.count)
            withUnsafeBytes(of: count.littleEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: bytes)
        }
        field(secret)
        field(request.method.utf8)
        field(request.rawPath.utf8)
        field((request.query ?? "").utf8)
        for name in signedHeaders {
            field(name.utf8)
            let values = request.header(name)
            field(withUnsafeBytes(of: UInt32(truncatingIfNeeded: values.count).littleEndian) { Array($0) })
            for value in values { field(value.utf8) }
        }
        field(payloadHash.utf8)
        return out.count <= maxKeyBytes ? Key(bytes: out) : nil
    }

    /// The signing key a verified request with this key derived.
    func signingKey(_ key: Key) -> [UInt8]? {
        entries.withLock { $0[key] }
    }

    func remember(_ key: Key, signingKey: [UInt8]) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = signingKey
        }
    }
}
