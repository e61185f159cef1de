import PortcullisCore

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

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    static let maxKeyBytes = 4096

    private let memo: StartOverMemo<Key, [UInt8]>

    init(capacity: Int = 1024) { memo = StartOverMemo(capacity: capacity) }

    /// The key of a presigned request's verification; nil when it would be too long to keep.
    static func key(
        _ request: S3SigV4.Request, signedHeaders: [String], payloadHash: String, secret: [UInt8]
    ) -> Key? {
        var out: [UInt8] = []
        out.reserveCapacity(256 + request.rawPath.utf8.count + (request.query?.utf8.count ?? 0))
        func field(_ bytes: UnsafeBufferPointer<UInt8>) {
            count(bytes.count)
            out.append(contentsOf: bytes)
        }
        func count(_ value: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { out.append(contentsOf: $0) }
        }
        func field(_ text: some StringProtocol) { text.withContiguousUTF8 { field($0) } }
        secret.withUnsafeBufferPointer { field($0) }
        field(request.method)
        field(request.rawPath)
        field(request.query ?? "")
        for name in signedHeaders {
            field(name)
            let values = request.header(name)
            count(values.count)
            for value in values { field(value) }
        }
        field(payloadHash)
        return out.count <= maxKeyBytes ? Key(bytes: out) : nil
    }

    /// The signing key a verified request with this key derived.
    func signingKey(_ key: Key) -> [UInt8]? {
        memo.value(for: key)
    }

    func remember(_ key: Key, signingKey: [UInt8]) {
        memo.remember(signingKey, for: key)
    }
}
