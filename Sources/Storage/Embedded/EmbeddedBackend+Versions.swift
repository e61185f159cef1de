public import PortcullisCore

/// Generation-addressed reads, deletes and listings (`VersionedStorage`). They always run on a lane: a
/// noncurrent generation is never in the inline readers' row cache, which holds live rows only.
extension EmbeddedBackend: VersionedStorage {
    public func metadata(of object: ObjectPath, generation: Int64) async throws(StorageError) -> ObjectMetadata {
        try check(object)
        return try await store.reader().run { (db) throws(StorageError) -> ObjectMetadata in
            guard let row = try ObjectIndex.fetch(db, bucket: object.bucket, name: object.name, generation: generation)
            else { throw .notFound }
            return row.metadata
        }
    }

    public func read(_ object: ObjectPath, generation: Int64, range: ByteRangeSpec?) async throws(StorageError)
        -> ObjectRead
    {
        try check(object)
        let prefix = store.layout.blobDirectory(bucket: bucket) + "/"
        return try await store.reader().run { (db) throws(StorageError) -> ObjectRead in
            guard let row = try ObjectIndex.fetch(db, bucket: object.bucket, name: object.name, generation: generation)
            else { throw .notFound }
            // A kept generation's blob goes only when its row goes: absent now means deleted meanwhile.
            guard let read = try Self.open(row, range, prefix) else { throw .notFound }
            return read
        }
    }

    public func deleteGeneration(
        _ object: ObjectPath, generation: Int64, preconditions: Preconditions, recording changes: ChangeRecorder?
    ) async throws(StorageError) {
        try check(object)
        let unreferenced = try await store.writer.run { (db) throws(StorageError) -> Int64? in
            try db.transaction(immediate: true) { () throws(StorageError) -> Int64? in
                guard
                    let row = try ObjectIndex.fetch(
                        db, bucket: object.bucket, name: object.name, generation: generation)
                else { throw .notFound }
                guard preconditions.isSatisfied(by: row.metadata) else { throw .preconditionFailed }
                if row.metadata.timeDeleted == nil {
                    try ObjectIndex.remove(db, bucket: object.bucket, name: object.name)
                } else {
                    try ObjectIndex.removeNoncurrent(
                        db, bucket: object.bucket, name: object.name, generation: generation)
                }
                // Removed for good, live or noncurrent: Cloud Storage's `deleted`.
                if let changes {
                    try EventOutboxSQL.insert(
                        db, changes.render(ObjectChange(kind: .deleted, object: row.metadata, time: .now())))
                }
                // A moved object shares its blob with nothing, but stay safe: unlink only what no row names.
                return try ObjectIndex.isReferenced(db, blobID: row.blobID) ? nil : row.blobID
            }
        }
        if let unreferenced { await blobs.removeBlob(bucket: bucket, blobID: unreferenced) }
    }

    public func updateMetadata(
        _ object: ObjectPath, generation: Int64, patch: MetadataPatch, preconditions: Preconditions,
        recording changes: ChangeRecorder?
    ) async throws(StorageError) -> ObjectMetadata {
        try check(object)
        return try await store.writer.run { (db) throws(StorageError) -> ObjectMetadata in
            try db.transaction(immediate: true) { () throws(StorageError) -> ObjectMetadata in
                guard
                    let row = try ObjectIndex.fetch(
                        db, bucket: object.bucket, name: object.name, generation: generation)
                else { throw .notFound }
                guard preconditions.isSatisfied(by: row.metadata) else { throw .preconditionFailed }
                let updated = patch.applied(to: row.metadata, now: .now())
                let stored = StoredObject(metadata: updated, blobID: row.blobID)
                if updated.timeDeleted == nil {
                    try ObjectIndex.upsert(db, stored)
                } else {
                    try ObjectIndex.replaceNoncurrent(db, stored)
                }
                if let changes {
                    try EventOutboxSQL.insert(
                        db, changes.render(ObjectChange(kind: .metadataUpdated, object: updated, time: updated.updated))
                    )
                }
                return updated
            }
        }
    }

    public func listVersions(_ request: ListRequest) async throws(StorageError) -> ListPage {
        let (cursor, scanner) = try listScan(request)
        let bucket = self.bucket
        return try await store.reader().run { (db) throws(StorageError) -> ListPage in
            try db.transaction(immediate: false) { () throws(StorageError) -> ListPage in
                var names = try IndexNameCursor(
                    database: db, bucket: bucket, upperBound: scanner.upperBound, includeNoncurrent: true)
                var page = try scanner.page(after: cursor, names: &names)
                // Every generation of each listed name, from the same snapshot: oldest first, the live one last.
                var items: [String] = []
                var objects: [ObjectMetadata] = []
                for name in page.items {
                    var rows = try ObjectIndex.noncurrent(db, bucket: bucket, name: name)
                    if let live = try ObjectIndex.fetch(db, bucket: bucket, name: name) { rows.append(live) }
                    for row in rows {
                        items.append(name)
                        objects.append(row.metadata)
                    }
                }
                page.items = items
                page.objects = objects
                return page
            }
        }
    }
}
