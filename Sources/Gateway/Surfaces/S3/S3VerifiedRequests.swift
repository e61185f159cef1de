import HTTPServer
import PortcullisCore

/// Presigned requests whose signature checked out: a presigned URL fetched again (a player's range requests, a
/// link handed to many readers) skips parsing its query and claim, rebuilding its canonical request, and the hash
/// and MAC over it.
///
/// Found by the method and the request-target as they arrived (the raw path and query hold the credential, date,
/// lifetime, signed header names and the signature); a hit is the same verification's answer, not a weaker one,
/// because everything else the signature covered is compared before it is used: every signed header's values,
/// the payload hash, and the secret of the access key as the key store holds it now (a key whose secret was
/// replaced or removed by a reload does not match). Expiry and clock skew are checked on every request, and
/// only successful checks are kept. Bounded: past `capacity` entries it starts over; targets longer than
/// `maxTargetBytes` are not kept.
final class S3VerifiedRequests: Sendable {
    /// A request's method and target, compared and hashed as bytes. Holds the request's own strings, so finding
    /// an entry copies nothing.
    struct Key: Hashable, Sendable {
        let method: String
        let target: String

        init(_ request: HTTPRequest) {
            method = request.method.rawValue
            target = request.target
        }

        func hash(into hasher: inout Hasher) {
            method.withContiguousUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            target.withContiguousUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }

        static func == (a: Key, b: Key) -> Bool { a.method.bytesEqual(b.method) && a.target.bytesEqual(b.target) }
    }

    /// What a verification read besides the target, and what it derived.
    struct Entry: Sendable {
        /// The target's query, parsed.
        let query: QueryParameters
        let claim: S3SigV4.Claim
        /// The values of `claim.signedHeaders`, in that order, as the signature covered them.
        let signedValues: [[String]]
        let payloadHash: String
        let secret: [UInt8]
        let signingKey: [UInt8]

        /// Whether a request with this entry's target carries the same signed header values and payload hash.
        /// The secret is compared by the caller, against the key store as it is now.
        func covers(_ headers: HTTPHeaders, payloadHash: String) -> Bool {
            guard payloadHash.bytesEqual(self.payloadHash) else { return false }
            for (name, values) in zip(claim.signedHeaders, signedValues) {
                guard headers.values(name, equal: values) else { return false }
            }
            return true
        }
    }

    static let maxTargetBytes = 4096

    private let memo: StartOverMemo<Key, Entry>

    init(capacity: Int = 1024) { memo = StartOverMemo(capacity: capacity) }

    /// The entry of a presigned request seen before with this method and target.
    func entry(for request: HTTPRequest) -> Entry? {
        memo.value(for: Key(request))
    }

    /// Keeps a verified presigned request; one with an overlong target is not kept.
    func remember(_ request: HTTPRequest, _ entry: Entry) {
        guard request.target.utf8.count <= Self.maxTargetBytes else { return }
        memo.remember(entry, for: Key(request))
    }
}
