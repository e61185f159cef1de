public import PortcullisCore

/// The default backend (`file:DIR`): a SQLite index (WAL) of objects and metadata, with each generation's
/// bytes in an immutable blob file under `DIR/blobs/`. Several buckets may share one directory.
///
/// Atomicity: a write streams into a temp file while hashing, fsyncs it, renames it to its blob name, fsyncs
/// the directory, calls `beforeCommit`, and then checks preconditions and upserts the row in one
/// transaction; the previous generation's blob is unlinked after the commit. A crash at any point leaves the
/// old object or the new one; start-up removes the orphans. Readers hold an open descriptor
/// (`FileRegion`), so an overwrite or delete never disturbs a read in progress.
///
/// Threads: SQLite calls run on the store's writer lane (serialised) and reader lanes; file I/O on its I/O
/// pool. Nothing here blocks the cooperative pool.
public final class EmbeddedBackend: StorageBackend, ResumableStaging, ChangeOutbox, InPlaceReads {
    public let bucket: String
    /// The canonical directory path.
    public var directory: String { store.layout.root }
    let store: EmbeddedStore
    var blobs: BlobStore { store.blobs }
    /// `DIR/blobs/<bucket hash>/`, computed once (every whole-object read opens a file under it).
    private let blobDirectoryPrefix: String

    /// Opens (creating if needed) the embedded store in `directory` and serves `bucket` from it. Backends of
    /// the same directory share one database and I/O pool. The first open of a directory in a process
    /// removes orphaned files (all of them when no other process has the directory open). Blocking: call at
    /// start-up.
    public static func open(
        directory: String, bucket: String,
        options: EmbeddedOptions = EmbeddedOptions()
    ) throws(StorageError) -> EmbeddedBackend {
        guard !bucket.isEmpty else { throw .invalidArgument("bucket name is empty") }
        let store = try EmbeddedStore.shared(directory: directory, options: options)
        try store.writer.runSync { (db) throws(StorageError) in
            try ObjectIndex.registerBucket(db, bucket, now: .now())
        }
        try FileSystem.makeDirectory(store.layout.blobDirectory(bucket: bucket))
        return EmbeddedBackend(store: store, bucket: bucket)
    }

    init(store: EmbeddedStore, bucket: String) {
        self.store = store
        self.bucket = bucket
        blobDirectoryPrefix = store.layout.blobDirectory(bucket: bucket) + "/"
    }

    // MARK: - Reads

    public func metadata(of object: ObjectPath) async throws(StorageError) -> ObjectMetadata {
        try await metadata(of: object, inPlace: nil)
    }

    public func metadata(of object: ObjectPath, inPlace permit: (any InPlaceLookupPermit)?) async throws(StorageError)
        -> ObjectMetadata
    {
        try check(object)
        return try await fetch(object, permit).metadata
    }

    public func read(_ object: ObjectPath, range: ByteRangeSpec?) async throws(StorageError) -> ObjectRead {
        try await read(object, range: range, inPlace: nil)
    }

    public func read(_ object: ObjectPath, range: ByteRangeSpec?, inPlace permit: (any InPlaceLookupPermit)?)
        async throws(StorageError) -> ObjectRead
    {
        try check(object)
        // One reader-lane hop for both the index row and the blob open (a lane is a dedicated queue for
        // blocking work; two hops — lane, then I/O pool — cost more than the open itself), or none at all on
        // an event loop (as `fetchIfPresent`: a local open is as brief as the lookup; a small object's bytes may
        // even be held with its row). The blob may vanish between the index read and the open when a
        // concurrent overwrite or delete commits in between; then the index is asked again and names the
        // newer state.
        let blobDirectoryPrefix = self.blobDirectoryPrefix
        for _ in 0..<4 {
            if store.inlineReaders.isUsable(under: permit),
                let entry = store.inlineReaders.fetch(
                    bucket: object.bucket, name: object.name,
                    content: { (stored) throws(StorageError) -> [UInt8]? in
                        try FileSystem.readWhole(
                            blobDirectoryPrefix + String(stored.blobID), count: Int(stored.metadata.size))
                    })
            {
                let entry = try entry.get()
                guard let stored = entry.row else { throw .notFound }
                if let content = entry.content {
                    let resolved = try Self.resolve(range, size: stored.metadata.size)
                    let body = resolved.map { Array(content[Int($0.offset)..<Int($0.offset + $0.length)]) }
                    return ObjectRead(metadata: stored.metadata, range: resolved, body: .bytes(body ?? content))
                }
                if let read = try Self.open(stored, range, blobDirectoryPrefix) { return read }
                continue
            }
            let read = try await lookUpOnLane(object, (range, blobDirectoryPrefix)) {
                (stored, input) throws(StorageError) -> ObjectRead? in
                guard let stored else { throw .notFound }
                return try Self.open(stored, input.0, input.1)
            }
            if let read { return read }
        }
        throw .internalError("blob of \(object) keeps disappearing")
    }

    /// The part of a `size`-byte object `range` asks for (nil: all of it), or `.rangeNotSatisfiable`.
    private static func resolve(_ range: ByteRangeSpec?, size: Int64) throws(StorageError) -> ResolvedRange? {
        guard let range else { return nil }
        if let satisfiable = range.resolve(size: size) { return satisfiable }
        // An empty object's `bytes=0-…` is the whole (empty) object, not an unsatisfiable range.
        if size == 0, case .fromTo(first: 0, _) = range { return nil }
        throw .rangeNotSatisfiable(size: size)
    }

    /// The read of `stored` from its blob file; nil when the file is gone (a newer commit removed it).
    static func open(
        _ stored: StoredObject, _ range: ByteRangeSpec?, _ blobDirectoryPrefix: String
    ) throws(StorageError) -> ObjectRead? {
        let resolved = try resolve(range, size: stored.metadata.size)
        guard let fd = try FileSystem.openForReading(blobDirectoryPrefix + String(stored.blobID)) else {
            return nil
        }
        let size = stored.metadata.size
        let region = FileRegion(descriptor: fd, offset: resolved?.offset ?? 0, length: resolved?.length ?? size)
        return ObjectRead(metadata: stored.metadata, range: resolved, body: .file(region))
    }

    /// What every listing (live, or every generation) starts from: the request checked against this bucket and
    /// the page bounds, its cursor decoded, and the scanner of its prefix and delimiter.
    func listScan(_ request: ListRequest) throws(StorageError) -> (cursor: ListCursor?, scanner: ListScanner) {
        guard request.bucket.bytesEqual(bucket) else { throw .bucketNotFound(request.bucket) }
        guard (1...1000).contains(request.maxResults) else {
            throw .invalidArgument("maxResults must be between 1 and 1000")
        }
        let cursor = try request.cursor.map { (text) throws(StorageError) -> ListCursor in
            try ListCursor(decoding: text)
        }
        var shape = request
        shape.cursor = nil
        let scanner = ListScanner(shape)
        return (cursor, scanner)
    }

    public func list(_ request: ListRequest) async throws(StorageError) -> ListPage {
        let (cursor, scanner) = try listScan(request)
        let bucket = self.bucket
        return try await store.reader().run { (db) throws(StorageError) -> ListPage in
            try db.transaction(immediate: false) { () throws(StorageError) -> ListPage in
                var names = try IndexNameCursor(database: db, bucket: bucket, upperBound: scanner.upperBound)
                var page = try scanner.page(after: cursor, names: &names)
                if request.includeMetadata {
                    // The rows of this page's items, from the same snapshot as the names.
                    var kept: [String] = []
                    for name in page.items {
                        guard let row = try ObjectIndex.fetch(db, bucket: bucket, name: name) else { continue }
                        kept.append(name)
                        page.objects.append(row.metadata)
                    }
                    page.items = kept
                }
                return page
            }
        }
    }

    public func isReady() async -> Bool { true }

    // MARK: - Writes

    public func write(
        _ object: ObjectPath, body: any ByteStream, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        try check(object)
        let received = try await blobs.receive(body, expectedSize: options.expectedSize)
        do throws(StorageError) {
            try verify(received.checksums, options: options)
        } catch {
            await blobs.remove(received.tempPath)
            throw error
        }
        return try await commit(
            object, source: received.tempPath, keepSource: false, checksums: received.checksums,
            attributes: attributes, options: options, stagingID: nil)
    }

    public func updateMetadata(
        _ object: ObjectPath, patch: MetadataPatch,
        preconditions: Preconditions
    ) async throws(StorageError) -> ObjectMetadata {
        try await updateMetadata(object, patch: patch, preconditions: preconditions, recording: nil)
    }

    public func delete(_ object: ObjectPath, preconditions: Preconditions) async throws(StorageError) {
        try await delete(object, preconditions: preconditions, recording: nil)
    }

    // MARK: - Shared commit path (write and finalize)

    /// Publishes `source` as a blob, asks `beforeCommit`, then commits the row in one transaction. Every
    /// failure removes the published blob; on success the replaced generation's blob is unlinked — unless the
    /// bucket has versioning enabled: then the replaced row becomes noncurrent in the same transaction and
    /// keeps its blob.
    func commit(
        _ object: ObjectPath, source: String, keepSource: Bool, checksums: ObjectChecksums,
        attributes: ObjectAttributes, options: WriteOptions,
        stagingID: String?
    ) async throws(StorageError) -> ObjectMetadata {
        let blobID: Int64
        do throws(StorageError) {
            blobID = try await store.writer.run { (db) throws(StorageError) -> Int64 in
                try db.transaction(immediate: true) { () throws(StorageError) -> Int64 in
                    try ObjectIndex.allocateGeneration(db, now: .now())
                }
            }
        } catch {
            if !keepSource { await blobs.remove(source) }
            throw error
        }
        let blobPath: String
        do throws(StorageError) {
            blobPath = try await blobs.publish(source, bucket: bucket, blobID: blobID, keepSource: keepSource)
        } catch {
            if !keepSource { await blobs.remove(source) }
            throw error
        }
        let now = Timestamp.now()
        var draft = ObjectMetadata(
            bucket: object.bucket, name: object.name, generation: blobID, metageneration: 1, size: checksums.size,
            timeCreated: now, updated: now, md5Hash: checksums.md5Base64, crc32c: checksums.crc32cBase64,
            storageClass: attributes.storageClass ?? "STANDARD", contentType: attributes.contentType,
            contentEncoding: attributes.contentEncoding,
            contentDisposition: attributes.contentDisposition, contentLanguage: attributes.contentLanguage,
            cacheControl: attributes.cacheControl, customMetadata: attributes.customMetadata,
            downloadTokens: attributes.downloadTokens, customTime: attributes.customTime)
        draft.owner = attributes.owner
        let proposed = draft
        do throws(StorageError) {
            if let beforeCommit = options.beforeCommit {
                do {
                    try await beforeCommit(proposed)
                } catch {
                    throw StorageError.rejected(error)
                }
            }
            let preconditions = options.preconditions
            let (committed, replaced) = try await store.writer.run {
                (db) throws(StorageError) -> (ObjectMetadata, Int64?) in
                try db.transaction(immediate: true) { () throws(StorageError) -> (ObjectMetadata, Int64?) in
                    let current = try ObjectIndex.fetch(db, bucket: object.bucket, name: object.name)
                    guard preconditions.isSatisfied(by: current?.metadata) else { throw .preconditionFailed }
                    var final = proposed
                    if let current, current.metadata.generation >= final.generation {
                        // A writer that allocated later committed first: stay strictly increasing.
                        final.generation = try ObjectIndex.allocateGeneration(db, now: .now())
                    }
                    if let stagingID {
                        guard
                            try StagingArea.close(
                                db, id: stagingID, state: .final, generation: final.generation,
                                now: now)
                        else {
                            throw .invalidArgument("The upload is no longer active.")
                        }
                    }
                    var replacedBlob = current?.blobID
                    var replaced = current?.metadata
                    if current != nil, try ObjectIndex.isVersioned(db, bucket: object.bucket) {
                        try ObjectIndex.archive(db, bucket: object.bucket, name: object.name, timeDeleted: now)
                        replacedBlob = nil
                        replaced?.timeDeleted = now
                    }
                    try ObjectIndex.upsert(db, StoredObject(metadata: final, blobID: blobID))
                    if let recorder = options.changes {
                        for change in ObjectChange.write(
                            committed: final, replaced: replaced, archived: replacedBlob == nil)
                        {
                            try EventOutboxSQL.insert(db, recorder.render(change))
                        }
                    }
                    return (final, replacedBlob)
                }
            }
            if let replaced, replaced != blobID { await blobs.removeBlob(bucket: bucket, blobID: replaced) }
            return committed
        } catch {
            await blobs.remove(blobPath)
            throw error
        }
    }

    // MARK: - Helpers

    func check(_ object: ObjectPath) throws(StorageError) {
        guard object.bucket.bytesEqual(bucket) else { throw .bucketNotFound(object.bucket) }
    }

    /// The index row of `object` (nil when absent): in place when the caller is an HTTP event loop running a
    /// request synchronously and an inline connection is free (no thread hop, and the row from that
    /// connection's cache when nothing has been committed since it was read; see `InlineReaders`), else on a
    /// reader lane.
    private func fetchIfPresent(_ object: ObjectPath, _ permit: (any InPlaceLookupPermit)? = nil)
        async throws(StorageError) -> StoredObject?
    {
        if store.inlineReaders.isUsable(under: permit),
            let row = store.inlineReaders.fetch(bucket: object.bucket, name: object.name)
        {
            return try row.get()
        }
        return try await lookUpOnLane(object, ()) { (stored, _) throws(StorageError) -> StoredObject? in stored }
    }

    /// The index row of `object` read on a reader lane, then `body` with it (at most one local file open) on the
    /// same lane: the path of a lookup that cannot run in place. Never inlined: the in-place path is the usual
    /// one, and the lane call's continuation would otherwise enlarge every lookup's task frame.
    ///
    /// `body` gets what it needs as `input` and should capture nothing: a closure without captures has no
    /// context to allocate.
    @inline(never)
    private func lookUpOnLane<Input: Sendable, T: Sendable>(
        _ object: ObjectPath, _ input: Input,
        _ body: @escaping @Sendable (StoredObject?, Input) throws(StorageError) -> T
    ) async throws(StorageError) -> T {
        try await store.reader().run { (db) throws(StorageError) -> T in
            try body(try ObjectIndex.fetch(db, bucket: object.bucket, name: object.name), input)
        }
    }

    private func fetch(_ object: ObjectPath, _ permit: (any InPlaceLookupPermit)? = nil) async throws(StorageError)
        -> StoredObject
    {
        guard let stored = try await fetchIfPresent(object, permit) else { throw .notFound }
        return stored
    }

    func verify(_ checksums: ObjectChecksums, options: WriteOptions) throws(StorageError) {
        try options.verify(
            size: checksums.size, md5Base64: checksums.md5Base64, crc32cBase64: checksums.crc32cBase64)
    }
}
