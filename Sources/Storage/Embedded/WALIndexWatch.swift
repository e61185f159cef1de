internal import CSQLite

/// One committed state of a WAL database, as its WAL-index header names it. Two reads that see equal versions
/// saw the same database content: every commit, by any connection of any process, and every restart of the
/// WAL writes a different header.
struct WALIndexVersion: Equatable, Sendable {
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    static func == (a: WALIndexVersion, b: WALIndexVersion) -> Bool { a.words == b.words }
}

/// Tells which committed state the embedded index is in without a read transaction, by reading the WAL-index
/// header (`pc_sqlite3_wal_index_header`) through one connection's own mapping of the index's shared memory.
///
/// Why: a read transaction costs one or two `fcntl` calls on a WAL read mark and a mutex the event loops'
/// connections share; a look at the header costs two 48-byte loads. `IndexRowCache` uses it to know that a
/// row it holds is still the current one.
///
/// The mapping is SQLite's, obtained through the VFS (no descriptor of the `-shm` file is opened or closed
/// here: closing one would drop this process's POSIX locks on it, SQLite's included). The watch keeps its
/// connection open, which keeps the mapping valid and the file at its size: SQLite truncates a `-shm` file only
/// under its exclusive "DMS" lock, which nobody can take while the connection holds the shared one.
final class WALIndexWatch: @unchecked Sendable {
    /// Keeps the mapping alive; never used for queries here (its slot's mutex guards those).
    private let connection: SQLiteDatabase
    /// Shared memory other connections and processes write; read only through the fenced C helper.
    private let header: UnsafeRawPointer

    /// nil when the connection's database is not in WAL mode. Call where the connection may be used (under
    /// its slot's mutex): this runs a statement on it.
    init?(connection: SQLiteDatabase) throws(StorageError) {
        guard let header = try connection.walIndex() else { return nil }
        self.connection = connection
        self.header = header
    }

    /// The index's current committed state; nil while a writer is halfway through storing the header (or the
    /// index is being recovered) — the caller then reads as if nothing were known.
    func version() -> WALIndexVersion? {
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        let complete = withUnsafeMutableBytes(of: &words) { raw in
            pc_sqlite3_wal_index_header(header, raw.baseAddress!.assumingMemoryBound(to: UInt64.self))
        }
        return complete == 1 ? WALIndexVersion(words: words) : nil
    }
}
