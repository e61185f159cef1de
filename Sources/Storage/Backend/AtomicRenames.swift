public import PortcullisCore

/// A backend that can rename an object in one transaction (the embedded backend: one index row changes its
/// name, the bytes stay where they are). Without it a move is a copy and a guarded delete, which another
/// reader can observe half done. Discovered once, at start-up, like the other optional abilities.
public protocol AtomicRenames: StorageBackend {
    /// Renames generation `generation` of `source` to `destination` (same bucket) in one commit: the
    /// destination gets a new generation, metageneration 1, the source's bytes, hashes and attributes; the
    /// source is gone; a replaced destination is deleted. `preconditions` are the destination's (checked against
    /// its current generation, absent = 0).
    ///
    /// Errors: `.notFound` when the source is absent, `.preconditionFailed` when it is not of `generation` or
    /// the destination's preconditions fail. With `changes`, the source's `deleted`, a replaced destination's
    /// `deleted` and the destination's `finalized` are recorded in the same transaction.
    func rename(
        _ source: ObjectPath, generation: Int64, to destination: ObjectPath, preconditions: Preconditions,
        recording changes: ChangeRecorder?
    ) async throws(StorageError) -> ObjectMetadata
}
