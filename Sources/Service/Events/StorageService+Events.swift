import PortcullisCore
import Storage

/// The service's change-event hook (docs/events.md): every commit — upload, finalize, metadata update, token
/// administration, first-token mint, delete — goes through these calls, which record its events.
///
/// The service hands the sink typed changes (kind, object, commit time); the sink renders them (the event body
/// is a wire format, which the service does not know). On a backend with an outbox (`ChangeOutbox`, the
/// embedded backend) the events are rendered and written in the commit transaction itself, then the sink is
/// only told to look; on other backends they are rendered after the call returned and handed to the sink's
/// in-memory queue. With no sink (no webhook configured) nothing is rendered or recorded.
extension StorageService {
    /// The backend's hook for rendering changes inside a commit, through `sink`.
    static func eventRecorder(_ sink: any ChangeEventSink) -> ChangeRecorder {
        ChangeRecorder { change in sink.event(change.kind, of: change.object, at: change.time) }
    }

    /// `options` with the event recording a write to `bucket` needs (unchanged when events are off or the
    /// backend keeps no outbox).
    func recordingChanges(_ options: WriteOptions, in bucket: Bucket) -> WriteOptions {
        guard let events, bucket.outbox != nil else { return options }
        var recorded = options
        recorded.changes = Self.eventRecorder(events)
        return recorded
    }

    /// After a write or finalize committed `committed` over `replaced` (the generation read before it).
    func publishWrite(_ committed: ObjectMetadata, replaced: ObjectMetadata?, in bucket: Bucket) {
        publish(ObjectChange.write(committed: committed, replaced: replaced), in: bucket)
    }

    /// A metadata update, recorded with its commit.
    func commitPatch(
        _ object: ObjectPath, _ patch: MetadataPatch, preconditions: Preconditions,
        in bucket: Bucket
    ) async throws(StorageError) -> ObjectMetadata {
        let updated: ObjectMetadata
        if let events, let outbox = bucket.outbox {
            updated = try await outbox.updateMetadata(
                object, patch: patch, preconditions: preconditions,
                recording: Self.eventRecorder(events))
        } else {
            updated = try await bucket.backend.updateMetadata(object, patch: patch, preconditions: preconditions)
        }
        publish([ObjectChange(kind: .metadataUpdated, object: updated, time: updated.updated)], in: bucket)
        return updated
    }

    /// An atomic move of generation `source.generation` to `destination`, recorded with its commit (the
    /// source's `deleted`, a replaced destination's `deleted`, the destination's `finalized`).
    func commitRename(
        _ path: ObjectPath, current source: ObjectMetadata, to destination: ObjectPath,
        replacing replaced: ObjectMetadata?,
        preconditions: Preconditions, with renames: any AtomicRenames, in bucket: Bucket
    ) async throws(StorageError) -> ObjectMetadata {
        let recorder = bucket.outbox != nil ? events.map(Self.eventRecorder) : nil
        let moved = try await renames.rename(
            path, generation: source.generation, to: destination,
            preconditions: preconditions, recording: recorder)
        publish(
            [ObjectChange(kind: .deleted, object: source, time: moved.updated)]
                + ObjectChange.write(committed: moved, replaced: replaced), in: bucket)
        return moved
    }

    /// A delete of `current` (the generation the preconditions pin), recorded with its commit.
    func commitDelete(
        _ object: ObjectPath, current: ObjectMetadata, preconditions: Preconditions,
        in bucket: Bucket
    ) async throws(StorageError) {
        if let events, let outbox = bucket.outbox {
            try await outbox.delete(object, preconditions: preconditions, recording: Self.eventRecorder(events))
        } else {
            try await bucket.backend.delete(object, preconditions: preconditions)
        }
        publish([ObjectChange(kind: .deleted, object: current, time: .now())], in: bucket)
    }

    /// Removes generation `current.generation` of `object` for good (a versioned backend), pinned to the
    /// metageneration judged. Either is a `deleted` change event (removed for good), as Cloud Storage sends it.
    func commitGenerationDelete(
        _ object: ObjectPath, current: ObjectMetadata, _ versioned: any VersionedStorage, in bucket: Bucket
    ) async throws(StorageError) {
        let recorder = bucket.outbox == nil ? nil : events.map(Self.eventRecorder)
        try await versioned.deleteGeneration(
            object, generation: current.generation,
            preconditions: Preconditions(ifMetagenerationMatch: current.metageneration), recording: recorder)
        publish([ObjectChange(kind: .deleted, object: current, time: .now())], in: bucket)
    }

    /// Tells the sink about committed changes: "look at the outbox" when the backend recorded them, else the
    /// rendered events themselves (rendered only here, after the commit, so a failed call publishes nothing).
    private func publish(_ changes: @autoclosure () -> [ObjectChange], in bucket: Bucket) {
        guard let events else { return }
        if bucket.outbox != nil {
            events.recorded()
        } else {
            events.publish(changes().map { events.event($0.kind, of: $0.object, at: $0.time) })
        }
    }
}
