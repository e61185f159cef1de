internal import CSQLite

/// One committed state of a WAL database, as its WAL-index header names it. Two reads that see equal versions
/// saw the same database content: every commit, by any connection of any process, and every restart of the
/// WAL writes a different header.
struct WALIndexVersion: Equatable, Sendable {
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    static func == (a: WALIndexVersion, b: WALIndexVersion) -> Bool { a.words == b.words }
}

/// Tells which committed state the embedded index is in without a read transaction, by reading the WAL-index
/// header from the index's `-shm` file, mapped read-only (`pc_sqlite3_wal_index_header`).
///
/// Why: a read transaction costs one or two `fcntl` calls on a WAL read mark and a mutex the event loops'
/// connections share; a look at the header costs two 48-byte loads. `IndexRowCache` uses it to know that a
/// row it holds is still the current one.
///
/// Safety of the mapping: SQLite truncates a `-shm` file only when it takes the file's exclusive "DMS" lock,
/// which it cannot while a connection of this process has the shared memory open; the owner of a watch keeps
/// such a connection open for the watch's whole life (`InlineReaders`).
final class WALIndexWatch: @unchecked Sendable {
    /// Read-only shared memory another process writes; read only through the fenced C helper.
    private let header: UnsafeRawPointer
    /// The header's two copies (96 bytes) lie in the first page.
    private static let mappedLength = 4096

    /// nil when the index has no WAL index (not in WAL mode, or not opened yet).
    init?(indexPath: String) {
        guard let header = FileSystem.mapReadOnly(indexPath + "-shm", length: Self.mappedLength) else { return nil }
        self.header = header
    }

    deinit { FileSystem.unmap(header, length: Self.mappedLength) }

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
