import PortcullisCore

/// The object-index rows one inline connection has read, kept while the index stays in the committed state
/// they were read in (`WALIndexVersion`).
///
/// Why: the same few objects are read over and over (an app's avatars, a site's assets), and a lookup from
/// SQLite — a read transaction with its WAL read-lock `fcntl`s and shared-mutex waits, a B-tree descent, the
/// row decoded — costs more than the rest of a metadata GET's storage work. A cached row is returned only while
/// no commit has happened since it was read, by this process or another, so a reader sees exactly what a
/// fresh lookup would; any commit (a write to any object, an event delivery, a sweep) forgets every row at
/// once. Absence is cached too: a missing object stays missing until the next commit.
///
/// The order that makes a row safe to keep: the version is read *before* the lookup. The lookup's snapshot
/// is that version or a later one; if later, a commit happened after the version was read, the header no
/// longer equals it, and the next look forgets the row.
struct IndexRowCache: Sendable {
    struct Key: Hashable, Sendable {
        let bucket: ExactString
        let name: ExactString

        init(bucket: String, name: String) {
            self.bucket = ExactString(bucket)
            self.name = ExactString(name)
        }
    }

    /// Rows kept at most; when full, all are forgotten (a working set larger than this reads from SQLite as
    /// it would without the cache). 0 keeps nothing.
    let capacity: Int
    private(set) var version: WALIndexVersion?
    private var rows: [Key: StoredObject?] = [:]

    init(capacity: Int) { self.capacity = max(0, capacity) }

    var count: Int { rows.count }

    /// The row of `key` as of `version` if it is known: `.some(nil)` when the object is known to be absent,
    /// nil when it must be looked up. A version other than the held one forgets every row first.
    mutating func row(_ key: Key, at version: WALIndexVersion) -> StoredObject?? {
        guard self.version == version else {
            if !rows.isEmpty { rows.removeAll(keepingCapacity: true) }
            self.version = version
            return nil
        }
        return rows[key]
    }

    /// Keeps what a lookup started at `version` found (read the version before the lookup). Ignored unless
    /// `version` is the one `row(_:at:)` last saw.
    mutating func remember(_ row: StoredObject?, for key: Key, readAt version: WALIndexVersion) {
        guard capacity > 0, self.version == version else { return }
        if rows.count >= capacity { rows.removeAll(keepingCapacity: true) }
        rows[key] = .some(row)
    }
}
