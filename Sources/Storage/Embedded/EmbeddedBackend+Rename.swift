public import PortcullisCore

/// `AtomicRenames`: a move is one transaction on the index — the source's row goes, the destination's row comes
/// with the same blob — so no reader ever sees both names or neither.
extension EmbeddedBackend: AtomicRenames {
    public func rename(
        _ source: ObjectPath, generation: Int64, to destination: ObjectPath, preconditions: Preconditions,
        recording changes: ChangeRecorder?
    ) async throws(StorageError) -> ObjectMetadata {
        try check(source)
        try check(destination)
        let (moved, replacedBlob) = try await store.writer.run {
            (db) throws(StorageError) -> (ObjectMetadata, Int64?) in
            try db.transaction(immediate: true) { () throws(StorageError) -> (ObjectMetadata, Int64?) in
                guard let current = try ObjectIndex.fetch(db, bucket: source.bucket, name: source.name) else {
                    throw .notFound
                }
                guard current.metadata.generation == generation else { throw .preconditionFailed }
                let replaced = try ObjectIndex.fetch(db, bucket: destination.bucket, name: destination.name)
                guard preconditions.isSatisfied(by: replaced?.metadata) else { throw .preconditionFailed }
                let now = Timestamp.now()
                var moved = current.metadata
                moved.name = destination.name
                moved.generation = try ObjectIndex.allocateGeneration(db, now: now)
                moved.metageneration = 1
                moved.timeCreated = now
                moved.updated = now
                // A versioned bucket keeps the replaced destination as noncurrent, with its blob.
                var replacedBlob = replaced?.blobID
                var replacedMetadata = replaced?.metadata
                if replaced != nil, try ObjectIndex.isVersioned(db, bucket: destination.bucket) {
                    try ObjectIndex.archive(db, bucket: destination.bucket, name: destination.name, timeDeleted: now)
                    replacedBlob = nil
                    replacedMetadata?.timeDeleted = now
                }
                try ObjectIndex.remove(db, bucket: source.bucket, name: source.name)
                try ObjectIndex.upsert(db, StoredObject(metadata: moved, blobID: current.blobID))
                if let changes {
                    try EventOutboxSQL.insert(
                        db, changes.render(ObjectChange(kind: .deleted, object: current.metadata, time: now)))
                    for change in ObjectChange.write(
                        committed: moved, replaced: replacedMetadata, archived: replacedBlob == nil && replaced != nil)
                    {
                        try EventOutboxSQL.insert(db, changes.render(change))
                    }
                }
                return (moved, replacedBlob)
            }
        }
        if let replacedBlob { await blobs.removeBlob(bucket: bucket, blobID: replacedBlob) }
        return moved
    }
}
