public import PortcullisCore

/// A backend that keeps noncurrent generations (Cloud Storage's object versioning) and addresses any kept
/// generation by number. Discovered once, at start-up, like the other optional abilities; the base
/// `StorageBackend` requirements keep meaning the live object only.
///
/// Which buckets keep noncurrent generations is the backend's own state (the embedded backend reads the
/// bucket's `versioning.enabled` in each commit; gs:// is the upstream bucket's setting): with it on, `write`
/// and `delete` move the replaced live generation to noncurrent with `timeDeleted` set, in the same commit (an
/// outbox records its change event as `archived`, not `deleted`); with it off they discard it, and generations
/// kept earlier stay until deleted by number.
public protocol VersionedStorage: StorageBackend {
    /// Metadata of `object` at `generation`, live or noncurrent (a noncurrent one has `timeDeleted`).
    /// Throws `.notFound` when no such generation is kept.
    func metadata(of object: ObjectPath, generation: Int64) async throws(StorageError) -> ObjectMetadata

    /// Opens `object` at `generation`, live or noncurrent; same range contract as `read(_:range:)`.
    /// Throws `.notFound` when no such generation is kept.
    func read(_ object: ObjectPath, generation: Int64, range: ByteRangeSpec?) async throws(StorageError)
        -> ObjectRead

    /// Removes `object` at `generation` for good, live or noncurrent (deleting the live generation by number
    /// keeps no noncurrent copy of it, as Cloud Storage does). `preconditions` are checked against that
    /// generation. Its change event is `deleted`, live or noncurrent (removed for good).
    /// Throws `.notFound` when no such generation is kept.
    func deleteGeneration(
        _ object: ObjectPath, generation: Int64, preconditions: Preconditions, recording: ChangeRecorder?
    ) async throws(StorageError)

    /// One page of every kept generation (`versions=true`): names chosen, ordered and paged exactly as
    /// `list(_:)` chooses them — among live and noncurrent names alike — with each item name repeated once
    /// per generation, oldest first, and `objects` holding each generation's metadata (whatever
    /// `includeMetadata` says). `maxResults` bounds the names on a page, not the generations.
    func listVersions(_ request: ListRequest) async throws(StorageError) -> ListPage
}
