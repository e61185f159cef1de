import Dispatch
import PortcullisCore
import Synchronization

/// Everything one embedded directory shares between the buckets (and backends) that use it: the SQLite
/// connections and their lanes, the file I/O pool, the directory lock and the maintenance timer.
///
/// One store per directory per process (`EmbeddedStore.shared`): SQLite wants one writer connection, and the
/// store's in-flight staging reservation must see every upload. The registry holds stores weakly, so a
/// store closes (connections, lock, timer) when its last backend is released.
final class EmbeddedStore: Sendable {
    let layout: DirectoryLayout
    let options: EmbeddedOptions
    let writer: DatabaseLane
    private let readers: [DatabaseLane]
    /// Connections for point lookups in place on an HTTP event loop (see `InlineReaders`).
    let inlineReaders: InlineReaders
    private let nextReader = Atomic<Int>(0)
    let blobs: BlobStore
    /// The directory's event outbox, for the dispatcher (one per directory, like the store).
    let events: EmbeddedEventLedger
    /// Bytes being appended to staged uploads right now, not yet counted in the index.
    let stagingInFlight = Atomic<Int64>(0)
    /// Running checksums of staged uploads appended by this process, by upload id: each covers exactly the
    /// first `fed` bytes of its staging file (its lane may still be hashing the last chunk's; finalize waits for
    /// them), so finalize can skip re-reading the whole file. Memory
    /// only (lost on a crash, absent for another process's appends): finalize falls back to reading the file
    /// whenever the entry does not cover exactly the recorded size. Bounded by `maxTrackedChecksums`.
    let stagedChecksums = Mutex<[ExactString: RunningChecksum]>([:])
    static let maxTrackedChecksums = 4096
    private let lockDescriptor: Int32
    private let maintenance: DispatchQueue
    /// Set once at the end of `init` (before the store is shared), read in `deinit`.
    nonisolated(unsafe) private var timer: (any DispatchSourceTimer)?

    /// Live stores by canonical directory, keyed by its bytes (two directories whose names are canonically
    /// equivalent are two directories to the file system). Guarded by `registryQueue` (a serial queue rather than `Mutex`:
    /// ThreadSanitizer understands Dispatch, while `Mutex`'s futex fast path on Linux is invisible to it).
    nonisolated(unsafe) private static var registry: [ExactString: WeakStore] = [:]
    private static let registryQueue = DispatchQueue(label: "portcullis.embedded.registry")

    private struct WeakStore: @unchecked Sendable { weak var store: EmbeddedStore? }

    /// The store of `directory`, opening (and garbage-collecting) it when no live store exists. Blocking:
    /// call at start-up, not from the cooperative pool on a hot path.
    static func shared(directory: String, options: EmbeddedOptions) throws(StorageError) -> EmbeddedStore {
        try FileSystem.makeDirectories(directory)
        let root = FileSystem.canonicalPath(directory) ?? directory
        let result: Result<EmbeddedStore, StorageError> = registryQueue.sync {
            if let existing = registry[ExactString(root)]?.store { return .success(existing) }
            do throws(StorageError) {
                let store = try EmbeddedStore(root: root, options: options)
                registry[ExactString(root)] = WeakStore(store: store)
                return .success(store)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private init(root: String, options: EmbeddedOptions) throws(StorageError) {
        layout = DirectoryLayout(root: root)
        self.options = options
        for directory in [layout.tmp, layout.blobs, layout.staging] { try FileSystem.makeDirectory(directory) }
        lockDescriptor = try FileSystem.create(layout.lockFile, exclusive: false)
        // Sole owner (nobody else holds the shared lock): every orphan is garbage. Otherwise only old ones.
        let soleOwner = FileSystem.tryLock(lockDescriptor, exclusive: true)
        let timeout = Int32(clamping: options.busyTimeoutMilliseconds)
        do throws(StorageError) {
            let writerConnection = try SQLiteDatabase(path: layout.index, busyTimeoutMilliseconds: timeout)
            try writerConnection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
            try writerConnection.execute(
                ObjectIndex.schema + StagingArea.schema + EventOutboxSQL.schema + EmbeddedBucketRoot.schema)
            try ObjectIndex.migrate(writerConnection)
            if soleOwner {
                // Leases of a process that died (kill -9) would hold its deliveries back until they end.
                try writerConnection.transaction(immediate: true) { () throws(StorageError) in
                    try EventOutboxSQL.releaseLeases(writerConnection, now: .now())
                }
            }
            writer = DatabaseLane(label: "portcullis.embedded.writer", connection: writerConnection)
            var readers = [DatabaseLane]()
            for index in 0..<max(1, options.readerConnections) {
                let connection = try SQLiteDatabase(path: layout.index, busyTimeoutMilliseconds: timeout)
                try connection.execute("PRAGMA query_only=1;")
                readers.append(DatabaseLane(label: "portcullis.embedded.reader.\(index)", connection: connection))
            }
            self.readers = readers
            events = EmbeddedEventLedger(writer: writer, reader: readers[0])
            inlineReaders = try InlineReaders(
                path: layout.index, count: options.inlineReaderConnections,
                cachedRows: options.cachedRowsPerInlineReader,
                cachedContentBytes: options.cachedContentBytesPerInlineReader)
        } catch {
            FileSystem.close(lockDescriptor)
            throw error
        }
        blobs = BlobStore(
            layout: layout, pool: BlockingPool(label: "portcullis.embedded.io", laneCount: options.ioThreads),
            hashers: BlockingPool(label: "portcullis.embedded.hash", laneCount: EmbeddedOptions.onlineCores))
        maintenance = DispatchQueue(label: "portcullis.embedded.maintenance", qos: .utility)
        let collector = GarbageCollector(store: self)
        do throws(StorageError) {
            try collector.collect(graceSeconds: soleOwner ? 0 : options.orphanGracePeriodSeconds, includeBlobs: true)
        } catch {
            options.logger.warning("embedded start-up cleanup failed", [("error", .string("\(error)"))])
        }
        // From now on this process is one of possibly several users of the directory.
        FileSystem.lock(lockDescriptor, exclusive: false)
        timer = makeSweepTimer()
    }

    deinit {
        timer?.cancel()
        FileSystem.close(lockDescriptor)
    }

    /// The next reader lane (round robin).
    func reader() -> DatabaseLane {
        readers[nextReader.add(1, ordering: .relaxed).oldValue % readers.count]
    }

    /// The periodic sweep of expired uploads and stale temp files; holds the store weakly.
    private func makeSweepTimer() -> any DispatchSourceTimer {
        let interval = max(1, options.sweepIntervalSeconds)
        let source = DispatchSource.makeTimerSource(queue: maintenance)
        source.schedule(deadline: .now() + .seconds(Int(interval)), repeating: .seconds(Int(interval)))
        source.setEventHandler { [weak self] in
            guard let self else { return }
            do throws(StorageError) {
                try GarbageCollector(store: self).collect(
                    graceSeconds: self.options.orphanGracePeriodSeconds,
                    includeBlobs: false)
            } catch {
                self.options.logger.warning("embedded sweep failed", [("error", .string("\(error)"))])
            }
        }
        source.resume()
        return source
    }
}
