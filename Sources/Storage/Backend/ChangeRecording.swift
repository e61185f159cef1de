public import PortcullisCore

/// One change as a commit made it: what happened to which generation, and when (docs/events.md).
public struct ObjectChange: Sendable, Equatable {
    public var kind: ChangeKind
    /// The object as committed (`finalized`, `metadataUpdated`) or as it was (`deleted`).
    public var object: ObjectMetadata
    /// The commit time.
    public var time: Timestamp

    public init(kind: ChangeKind, object: ObjectMetadata, time: Timestamp) {
        self.kind = kind
        self.object = object
        self.time = time
    }

    /// The changes a write produces: the replaced generation's `deleted` (Cloud Storage reports an overwrite of
    /// a live object as its deletion, as a bucket without versioning does), then the new one's `finalized`.
    /// `archived`: the replaced generation was kept as noncurrent (a versioned bucket), so its event is
    /// `archived` rather than `deleted`.
    public static func write(committed: ObjectMetadata, replaced: ObjectMetadata?, archived: Bool = false)
        -> [ObjectChange]
    {
        var changes: [ObjectChange] = []
        if let replaced {
            changes.append(
                ObjectChange(kind: archived ? .archived : .deleted, object: replaced, time: committed.updated))
        }
        changes.append(ObjectChange(kind: .finalized, object: committed, time: committed.updated))
        return changes
    }
}

/// A request to record the commit's change events with the commit itself: what a backend with an outbox
/// (`ChangeOutbox`) stores in the same transaction as the change, so a crash never separates the two.
///
/// `render` turns each change into the event to store; the backend calls it inside the commit, once per
/// change, in order (for an overwrite: the replaced generation's `deleted`, then `finalized`), with the
/// metadata exactly as committed. It must be quick and must not call back into the backend. Backends without
/// an outbox ignore the request; the caller then publishes the events itself after the call returns.
public struct ChangeRecorder: Sendable {
    public let render: @Sendable (ObjectChange) -> ChangeEvent

    public init(render: @escaping @Sendable (ObjectChange) -> ChangeEvent) {
        self.render = render
    }
}

/// A backend that writes change events into an outbox in the same transaction as the change (the embedded
/// backend): a committed change always has its events, and an uncommitted one never does. Discovered once,
/// at start-up, like the other optional abilities.
///
/// Writes and finalizes record through `WriteOptions.changes`; metadata updates and deletes through these
/// variants of the core calls (same contracts, plus the recording).
public protocol ChangeOutbox: StorageBackend {
    func updateMetadata(
        _ object: ObjectPath, patch: MetadataPatch, preconditions: Preconditions,
        recording changes: ChangeRecorder?
    ) async throws(StorageError) -> ObjectMetadata

    func delete(
        _ object: ObjectPath, preconditions: Preconditions,
        recording changes: ChangeRecorder?) async throws(StorageError)

    /// The outbox, for the dispatcher that delivers its events.
    var eventLedger: any EventLedger { get }
}
