import Crypto
public import PortcullisCore

/// Metadata updates: a self-copy with `x-amz-metadata-directive: REPLACE`, one at a time per object version.
///
/// Why a claim key and not a conditional copy: a metadata-only self-copy keeps the object's ETag, so no
/// ETag condition (`x-amz-copy-source-if-match`) can tell two metadata versions apart, and `Last-Modified` has
/// one-second resolution. Two updates that both read metageneration N would both copy, and the second would
/// silently undo the first (or both would pass the same `ifMetagenerationMatch`). What every S3 engine the
/// gateway supports does honour is `If-None-Match: *` on PutObject (AWS since 2024, Ceph RGW, moto): exactly
/// one of two racing creators of a key gets 200, the other 412. So an update first creates the hidden key
/// `.portcullis-staging/m/<sha256(name)>/<generation>.<metageneration>` of the version it read; its creator
/// alone may turn that version into the next. Under the claim it reads the object again (the version may have
/// moved on between its first read and the claim: a claim deleted after a finished update is free again), applies
/// the patch to what it read, copies, and deletes the claim. A caller that loses the claim waits for it to go
/// and starts over from a fresh read, so its preconditions are judged against the version the winner wrote:
/// two PATCHes with the same `ifMetagenerationMatch` give one 200 and one 412, and two unconditional ones both
/// land, the second merged onto the first.
///
/// A claim whose holder died is taken over once it is older than its lease (stored in the claim, from the
/// holder's clock: instances' clocks must agree to within seconds): it is deleted and the update starts over.
/// Known limit: two updates that find the same abandoned claim at once may both take it over (the second delete
/// can remove the first taker's fresh claim); after a crash, and only then, one of two such updates can be lost.
/// The copy is also guarded by the ETag read under the claim (`x-amz-copy-source-if-match`, and Ceph RGW's
/// `x-amz-copy-if-match`, the only spelling RGW 16 reads), so a concurrent overwrite with new bytes is not
/// undone by a stale metadata copy.
extension S3Backend {
    /// How long a claim holder may take before others treat the claim as abandoned: 30 s, plus the time a
    /// multipart copy of a large object may need (at 20 MiB/s).
    static func claimLease(size: Int64) -> Int64 { 30_000_000 + size / 20 }  // microseconds

    /// The claim key of one object version.
    static func claimKey(_ name: String, generation: Int64, metageneration: Int64) -> String {
        stagingPrefix + "m/" + HexText.encode(SHA256.hash(Array(name.utf8))) + "/\(generation).\(metageneration)"
    }

    public func updateMetadata(
        _ object: ObjectPath, patch: MetadataPatch,
        preconditions: Preconditions
    ) async throws(StorageError) -> ObjectMetadata {
        var pause: UInt64 = 5_000_000
        var waited: Int64 = 0
        while true {
            let (seen, _) = try await head(object)
            guard preconditions.isSatisfied(by: seen) else { throw .preconditionFailed }
            let claim = Self.claimKey(object.name, generation: seen.generation, metageneration: seen.metageneration)
            let lease = Self.claimLease(size: seen.size)
            if try await tryClaim(claim, lease: lease) {
                do {
                    let (current, etag) = try await head(object)
                    guard current.generation == seen.generation, current.metageneration == seen.metageneration
                    else {
                        await cleanUp { [self] () async throws(StorageError) in try await deleteKey(claim) }
                        continue  // the version moved on between the first read and the claim
                    }
                    let next = patch.applied(
                        to: current,
                        now: Timestamp(nanosecondsSinceEpoch: Timestamp.now().nanosecondsSinceEpoch / 1000 * 1000))
                    try await copy(
                        from: object.name, to: object.name, size: current.size, headers: headers(for: next),
                        sourceETag: etag)
                } catch {
                    await cleanUp { [self] () async throws(StorageError) in try await deleteKey(claim) }
                    throw error
                }
                await cleanUp { [self] () async throws(StorageError) in try await deleteKey(claim) }
                return try await metadata(of: object)
            }
            // Claimed by another update: wait for it to finish (or its lease to run out), then start over.
            if let expires = try await claimExpiry(claim), expires < Timestamp.now().nanosecondsSinceEpoch / 1000 {
                await cleanUp { [self] () async throws(StorageError) in try await deleteKey(claim) }
                continue
            }
            guard waited < lease * 2 else {
                throw .unavailable(reason: "another metadata update of this object holds its claim", retryAfter: 1)
            }
            do { try await Task.sleep(nanoseconds: pause) } catch {
                throw .unavailable(reason: "cancelled", retryAfter: 1)
            }
            waited += Int64(pause / 1000)
            pause = min(pause * 2, 100_000_000)
        }
    }

    /// Creates `claim` if it does not exist (`If-None-Match: *`); false when another update holds it.
    func tryClaim(_ claim: String, lease: Int64) async throws(StorageError) -> Bool {
        let expires = Timestamp.now().nanosecondsSinceEpoch / 1000 + lease
        do {
            _ = try await exchange(
                "PUT", url(claim),
                headers: [
                    ("Content-Type", "application/octet-stream"), ("If-None-Match", "*"),
                    ("x-amz-meta-portcullis-expires", String(expires)),
                ],
                body: [], op: "update_claim", idempotent: false)
            return true
        } catch .preconditionFailed {
            return false
        }
    }

    /// When the holder's lease on `claim` ends (microseconds since the epoch); nil once the claim is gone.
    func claimExpiry(_ claim: String) async throws(StorageError) -> Int64? {
        do {
            let (headers, _) = try await exchange("HEAD", url(claim), op: "update_claim_head", idempotent: true)
            return headers.first(ignoringCase: "x-amz-meta-portcullis-expires").flatMap { Int64($0) } ?? 0
        } catch .notFound {
            return nil
        }
    }
}
