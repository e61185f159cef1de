public import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// Tuning of an embedded (`file:DIR`) store. One set of options applies per directory: the first
/// `EmbeddedBackend.open` of a directory in a process creates the shared store with its options; later opens
/// of the same directory (other buckets) share it and their options are ignored.
public struct EmbeddedOptions: Sendable {
    /// SQLite reader connections (each on its own serial queue); reads run concurrently with the writer.
    public var readerConnections: Int
    /// SQLite reader connections for point lookups made in place on an HTTP event loop (`InPlaceLookup`):
    /// one per loop is enough (the server runs one loop per core); 0 sends every read through the reader
    /// lanes. When all are in use, or the database is busy, a read takes a lane as before.
    public var inlineReaderConnections: Int
    /// Index rows each inline connection keeps while nothing is committed (`IndexRowCache`); 0 caches none.
    public var cachedRowsPerInlineReader: Int
    /// Bytes of small objects (≤ 16 KiB each) each inline connection keeps with their rows; 0 keeps none.
    public var cachedContentBytesPerInlineReader: Int
    /// Threads for blocking file I/O (open, write, fsync, rename, unlink).
    public var ioThreads: Int
    /// How long a SQLite call waits for another process's write lock before failing as `.unavailable`.
    public var busyTimeoutMilliseconds: Int
    /// Ceiling on the bytes of all active resumable uploads in the directory; an append beyond it fails with
    /// `.unavailable` (retry later) and stores nothing.
    public var maxStagedBytes: Int64
    /// A resumable upload untouched for this long is discarded (its handle then answers `.notFound`).
    public var stagingIdleExpirySeconds: Int64
    /// How often expired uploads and stale temp files are swept while running.
    public var sweepIntervalSeconds: Int64
    /// When another process has the directory open, start-up and periodic sweeps only remove files at least
    /// this old (they could be that process's in-flight writes). A sole owner removes every orphan at once.
    public var orphanGracePeriodSeconds: Int64
    public var logger: Logger

    public init(
        readerConnections: Int = 2, inlineReaderConnections: Int = EmbeddedOptions.onlineCores,
        cachedRowsPerInlineReader: Int = 1024, cachedContentBytesPerInlineReader: Int = 4 << 20, ioThreads: Int = 2,
        busyTimeoutMilliseconds: Int = 5000,
        maxStagedBytes: Int64 = 64 << 30, stagingIdleExpirySeconds: Int64 = 7 * 24 * 3600,
        sweepIntervalSeconds: Int64 = 600, orphanGracePeriodSeconds: Int64 = 3600,
        logger: Logger = .disabled
    ) {
        self.readerConnections = readerConnections
        self.inlineReaderConnections = inlineReaderConnections
        self.cachedRowsPerInlineReader = cachedRowsPerInlineReader
        self.cachedContentBytesPerInlineReader = cachedContentBytesPerInlineReader
        self.ioThreads = ioThreads
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.maxStagedBytes = maxStagedBytes
        self.stagingIdleExpirySeconds = stagingIdleExpirySeconds
        self.sweepIntervalSeconds = sweepIntervalSeconds
        self.orphanGracePeriodSeconds = orphanGracePeriodSeconds
        self.logger = logger
    }

    /// The number of online processors (the HTTP server's loop count).
    public static var onlineCores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
