public import PortcullisCore

/// Metadata updates and deletes, with their change events written in the same transaction (`ChangeOutbox`).
extension EmbeddedBackend {
    public var eventLedger: any EventLedger { store.events }

    public func updateMetadata(
        _ object: ObjectPath, patch: MetadataPatch, preconditions: Preconditions,
        recording changes: ChangeRecorder?
    ) async throws(StorageError) -> ObjectMetadata {
        try check(object)
        return try await store.writer.run { (db) throws(StorageError) -> ObjectMetadata in
            try db.transaction(immediate: true) { () throws(StorageError) -> ObjectMetadata in
                guard let current = try ObjectIndex.fetch(db, bucket: object.bucket, name: object.name) else {
                    throw .notFound
                }
                guard preconditions.isSatisfied(by: current.metadata) else { throw .preconditionFailed }
                let updated = patch.applied(to: current.metadata, now: .now())
                try ObjectIndex.upsert(db, StoredObject(metadata: updated, blobID: current.blobID))
                if let changes {
                    try EventOutboxSQL.insert(
                        db,
                        changes.render(
                            ObjectChange(
                                kind: .metadataUpdated, object: updated,
                                time: updated.updated)))
                }
                return updated
            }
        }
    }

    public func delete(
        _ object: ObjectPath, preconditions: Preconditions,
        recording changes: ChangeRecorder?
    ) async throws(StorageError) {
        try check(object)
        let blobID = try await store.writer.run { (db) throws(StorageError) -> Int64? in
            try db.transaction(immediate: true) { () throws(StorageError) -> Int64? in
                guard let current = try ObjectIndex.fetch(db, bucket: object.bucket, name: object.name) else {
                    throw .notFound
                }
                guard preconditions.isSatisfied(by: current.metadata) else { throw .preconditionFailed }
                // A versioned bucket keeps the deleted generation as noncurrent, with its blob.
                let versioned = try ObjectIndex.isVersioned(db, bucket: object.bucket)
                let now = Timestamp.now()
                var gone = current.metadata
                if versioned {
                    try ObjectIndex.archive(db, bucket: object.bucket, name: object.name, timeDeleted: now)
                    gone.timeDeleted = now
                }
                try ObjectIndex.remove(db, bucket: object.bucket, name: object.name)
                if let changes {
                    try EventOutboxSQL.insert(
                        db,
                        changes.render(
                            ObjectChange(
                                kind: versioned ? .archived : .deleted, object: gone,
                                time: now)))
                }
                return versioned ? nil : current.blobID
            }
        }
        if let blobID { await blobs.removeBlob(bucket: bucket, blobID: blobID) }
    }
}
