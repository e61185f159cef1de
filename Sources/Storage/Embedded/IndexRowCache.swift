import PortcullisCore

/// The object-index rows one inline connection has read, kept while the index stays in the committed state
/// they were read in (`WALIndexVersion`).
///
/// Why: the same few objects are read over and over (an app's avatars, a site's assets), and a lookup from
/// SQLite — a read transaction with its WAL read-lock `fcntl`s and shared-mutex waits, a B-tree descent, the
/// row decoded — costs more than the rest of a metadata GET's storage work. A cached row is returned only while
/// no commit has happened since it was read, by this process or another, so a reader sees exactly what a
/// fresh lookup would; any commit (a write to any object, an event delivery, a sweep) forgets every row at
/// once. Absence is cached too: a missing object stays missing until the next commit. So are the bytes of small
/// objects read in place, within a budget, which saves a download its blob's open, `pread` and close.
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

    /// What is known of one object: its row (nil: absent) and, for a small object, its bytes.
    struct Entry: Sendable {
        var row: StoredObject?
        /// The whole blob of `row` when it was read in place and fit the budget. A blob file never changes
        /// (it is named by the generation that wrote it), so these are its bytes for as long as the row is.
        var content: [UInt8]?
    }

    /// Objects larger than this never have their bytes kept: the syscalls a read saves are its open, `pread`
    /// and close, which matter next to small bodies only (larger ones go out with `sendfile`).
    static let largestContent = 16 * 1024

    /// Rows kept at most; when full, all are forgotten (a working set larger than this reads from SQLite as
    /// it would without the cache). 0 keeps nothing.
    let capacity: Int
    /// Bytes of object content kept at most; past it, rows are still kept but new content is not.
    let contentBudget: Int
    private(set) var version: WALIndexVersion?
    private var entries: [Key: Entry] = [:]
    private(set) var contentBytes = 0

    init(capacity: Int, contentBudget: Int = 0) {
        self.capacity = max(0, capacity)
        self.contentBudget = max(0, contentBudget)
    }

    var count: Int { entries.count }

    /// What is known of `key` as of `version`; nil when it must be looked up. A version other than the held
    /// one forgets everything first.
    mutating func entry(_ key: Key, at version: WALIndexVersion) -> Entry? {
        guard self.version == version else {
            forgetAll()
            self.version = version
            return nil
        }
        return entries[key]
    }

    /// Keeps what a lookup started at `version` found (read the version before the lookup). Ignored unless
    /// `version` is the one `entry(_:at:)` last saw.
    mutating func remember(_ row: StoredObject?, for key: Key, readAt version: WALIndexVersion) {
        guard capacity > 0, self.version == version else { return }
        if entries.count >= capacity { forgetAll() }
        entries[key] = Entry(row: row)
    }

    /// Whether the bytes of `row` would be kept: no larger than `largestContent`, and within the budget left.
    /// Asked before reading them.
    func hasRoom(forContentOf row: StoredObject) -> Bool {
        let size = row.metadata.size
        return size <= Int64(Self.largestContent) && Int64(contentBytes) + size <= Int64(contentBudget)
    }

    /// Keeps the bytes of the row remembered for `key` (read from the file of that row's blob), when they are
    /// that row's size and it `hasRoom(forContentOf:)` them.
    mutating func remember(content: [UInt8], for key: Key, readAt version: WALIndexVersion) {
        guard self.version == version, let entry = entries[key], entry.content == nil, let row = entry.row,
            row.metadata.size == Int64(content.count), hasRoom(forContentOf: row)
        else { return }
        entries[key]!.content = content
        contentBytes += content.count
    }

    private mutating func forgetAll() {
        if !entries.isEmpty { entries.removeAll(keepingCapacity: true) }
        contentBytes = 0
    }
}
