import PortcullisCore
import Synchronization

/// SQLite reader connections used in place, on the calling thread, for point lookups made while an HTTP event
/// loop runs a request synchronously, under the loop's permit the caller passes (`InPlaceReads`).
///
/// Why: a cached metadata GET is a ~10 µs index lookup, but the round trip through a reader lane (enqueue,
/// wake the lane's thread, resume the task on the cooperative pool, hand the response back to the connection's
/// queue) cost three thread switches and most of the request's CPU. Done in place, the whole request finishes
/// on the loop without a hop.
///
/// The trade (docs/architecture.md): while the lookup runs, the loop's other connections wait. It is bounded here:
/// - only point lookups by primary key (one B-tree descent, normally from the page cache) come here — never a
///   list scan or a write;
/// - the connections have a busy timeout of 0: a lookup that would wait for a lock (WAL recovery, another
///   process's checkpoint) fails at once and is retried on a reader lane, which may wait;
/// - a connection is taken with `tryLock`: when every one is in use, the read takes a lane instead of waiting.
///
/// Each connection keeps the rows it read in an `IndexRowCache`, returned without a read transaction while the
/// index's WAL-index header (`WALIndexWatch`) says nothing has been committed since.
///
/// Each connection is used by one thread at a time (the mutex), which is what `SQLITE_OPEN_NOMUTEX` requires.
final class InlineReaders: Sendable {
    private struct SlotState {
        let connection: SQLiteDatabase
        var cache: IndexRowCache
    }

    private final class Slot: Sendable {
        let state: Mutex<SlotState>
        init(_ state: SlotState) { self.state = Mutex(state) }
    }

    private let slots: [Slot]
    private let next = Atomic<Int>(0)
    private let cacheHits = Atomic<Int>(0)
    /// nil when the index has no WAL index to watch: then nothing is cached.
    private let watch: WALIndexWatch?

    init(path: String, count: Int, cachedRows: Int = 1024, cachedContentBytes: Int = 0) throws(StorageError) {
        var slots: [Slot] = []
        for _ in 0..<max(0, count) {
            let connection = try SQLiteDatabase(path: path, busyTimeoutMilliseconds: 0)
            try connection.execute("PRAGMA query_only=1;")
            slots.append(
                Slot(
                    SlotState(
                        connection: connection,
                        cache: IndexRowCache(capacity: cachedRows, contentBudget: cachedContentBytes))))
        }
        self.slots = slots
        if let first = slots.first, cachedRows > 0 {
            watch = try first.state.withLock { (state) throws(StorageError) -> WALIndexWatch? in
                try WALIndexWatch(connection: state.connection)
            }
        } else {
            watch = nil
        }
    }

    /// Whether an in-place read may be attempted here at all: connections exist and the caller holds an event
    /// loop's permit that covers this thread.
    func isUsable(under permit: (any InPlaceLookupPermit)?) -> Bool {
        !slots.isEmpty && InPlaceLookup.applies(permit)
    }

    /// How many lookups have been tried in place (tests check that a disabled configuration tries none).
    var attempts: Int { next.load(ordering: .relaxed) }

    /// How many lookups were answered from a connection's row cache.
    var hits: Int { cacheHits.load(ordering: .relaxed) }

    /// Whether rows are cached at all (the index is in WAL mode and caching is not switched off).
    var isCaching: Bool { watch != nil }

    /// The current row of `bucket`/`name` (nil: no such object), from a connection's cache when nothing has
    /// been committed since it was read, else from SQLite. nil when no connection is free or the database is
    /// busy (the caller then uses a reader lane).
    func fetch(bucket: String, name: String) -> Result<StoredObject?, StorageError>? {
        fetch(bucket: bucket, name: name, content: nil).map { $0.map(\.row) }
    }

    /// As `fetch(bucket:name:)`, with the object's bytes when they are cached or, for an object small enough
    /// to keep (`IndexRowCache.largestContent`), read now with `load` (nil: the blob is gone) and kept.
    func fetch(
        bucket: String, name: String, content load: ((StoredObject) throws(StorageError) -> [UInt8]?)?
    ) -> Result<IndexRowCache.Entry, StorageError>? {
        // Read before the lookup, never after (see `IndexRowCache`).
        let version = watch?.version()
        let key = IndexRowCache.Key(bucket: bucket, name: name)
        return run { (db, cache) throws(StorageError) -> IndexRowCache.Entry in
            var entry: IndexRowCache.Entry
            if let version, let known = cache.entry(key, at: version) {
                self.cacheHits.add(1, ordering: .relaxed)
                entry = known
            } else {
                entry = IndexRowCache.Entry(row: try ObjectIndex.fetch(db, bucket: bucket, name: name))
                if let version { cache.remember(entry.row, for: key, readAt: version) }
            }
            if let load, let version, entry.content == nil, let row = entry.row, cache.hasRoom(forContentOf: row) {
                entry.content = try load(row)
                if let content = entry.content { cache.remember(content: content, for: key, readAt: version) }
            }
            return entry
        }
    }

    /// Runs `body` on a free connection, in place. nil when none is free or the database is busy (the caller
    /// then uses a reader lane); otherwise the body's result or error.
    func run<T: Sendable>(
        _ body: (SQLiteDatabase, inout IndexRowCache) throws(StorageError) -> T
    ) -> Result<T, StorageError>? {
        let start = next.add(1, ordering: .relaxed).oldValue
        for offset in 0..<slots.count {
            let slot = slots[(start &+ offset) % slots.count]
            let outcome = slot.state.withLockIfAvailable { state -> Result<T, StorageError> in
                defer { state.connection.releaseStatements() }
                do throws(StorageError) {
                    return .success(try body(state.connection, &state.cache))
                } catch {
                    return .failure(error)
                }
            }
            guard let outcome else { continue }
            if case .failure(.unavailable) = outcome { return nil }
            return outcome
        }
        return nil
    }
}
