import PortcullisCore

/// Resumable-upload sessions of an embedded directory: state in SQLite (so any process opening the
/// directory can continue a session), bytes in `DIR/staging/<id>`.
///
/// Chunk protocol: the appender takes an exclusive `flock` on the staging file (one appender per session,
/// across processes), re-checks the offset against the index, truncates away anything a crashed append left
/// past the recorded size, writes, syncs (`fdatasync`: bytes and size), and only then records the new size —
/// the commit point. A chunk is therefore stored whole or not at all.
enum StagingArea {
    /// Finished sessions stay (state `final` or `cancelled`) until they expire, so that a retried last chunk
    /// learns how its upload ended — a week's worth under a steady stream of uploads. The two indexes keep that
    /// backlog off the hot paths: every chunk sums the sizes of the *active* sessions (`staging_active`, a
    /// partial index holding only those rows: the scan visits active sessions only, however many finished ones
    /// wait for expiry), and the periodic sweep finds expired rows by `last_active` instead of reading the table.
    static let schema = """
        CREATE TABLE IF NOT EXISTS staging (
            id TEXT COLLATE BINARY PRIMARY KEY NOT NULL,
            bucket TEXT COLLATE BINARY NOT NULL,
            name BLOB NOT NULL,
            attributes TEXT NOT NULL,
            declared_size INTEGER,
            size INTEGER NOT NULL,
            state TEXT NOT NULL,
            generation INTEGER,
            time_created INTEGER NOT NULL,
            last_active INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS staging_active ON staging(size) WHERE state = 'active';
        CREATE INDEX IF NOT EXISTS staging_last_active ON staging(last_active);
        """

    /// One session row.
    struct Session: Sendable {
        enum State: String, Sendable { case active, final, cancelled }
        let id: String
        let bucket: String
        let name: String
        let attributes: ObjectAttributes
        let declaredSize: Int64?
        let size: Int64
        let state: State
        let generation: Int64?
    }

    static func insert(
        _ db: SQLiteDatabase, id: String, object: ObjectPath, attributes: ObjectAttributes,
        declaredSize: Int64?, now: Timestamp
    ) throws(StorageError) {
        let statement = try db.statement(
            """
            INSERT INTO staging (id, bucket, name, attributes, declared_size, size, state, time_created, last_active)
            VALUES (?1, ?2, ?3, ?4, ?5, 0, 'active', ?6, ?6)
            """)
        try statement.bind(1, id)
        try statement.bind(2, object.bucket)
        try statement.bind(3, blob: Array(object.name.utf8))
        try statement.bind(4, MetadataCoding.encode(attributes))
        try statement.bind(5, declaredSize)
        try statement.bind(6, now.nanosecondsSinceEpoch)
        try statement.run()
    }

    static func fetch(_ db: SQLiteDatabase, id: String) throws(StorageError) -> Session? {
        let statement = try db.statement(
            """
            SELECT bucket, name, attributes, declared_size, size, state, generation FROM staging WHERE id = ?1
            """)
        try statement.bind(1, id)
        guard try statement.step() else { return nil }
        return Session(
            id: id, bucket: statement.text(0) ?? "", name: String(decoding: statement.blob(1), as: UTF8.self),
            attributes: MetadataCoding.decodeAttributes(statement.text(2)),
            declaredSize: statement.optionalInt64(3), size: statement.int64(4),
            state: Session.State(rawValue: statement.text(5) ?? "") ?? .cancelled,
            generation: statement.optionalInt64(6))
    }

    /// Records a stored chunk: succeeds only if the session is still active at `oldSize`.
    static func recordAppend(
        _ db: SQLiteDatabase, id: String, oldSize: Int64, newSize: Int64,
        now: Timestamp
    ) throws(StorageError) -> Bool {
        let statement = try db.statement(
            """
            UPDATE staging SET size = ?3, last_active = ?4 WHERE id = ?1 AND size = ?2 AND state = 'active'
            """)
        try statement.bind(1, id)
        try statement.bind(2, oldSize)
        try statement.bind(3, newSize)
        try statement.bind(4, now.nanosecondsSinceEpoch)
        try statement.run()
        return db.changes == 1
    }

    /// Moves an active session to `final` (inside the commit transaction) or `cancelled`.
    static func close(
        _ db: SQLiteDatabase, id: String, state: Session.State, generation: Int64?,
        now: Timestamp
    ) throws(StorageError) -> Bool {
        let statement = try db.statement(
            """
            UPDATE staging SET state = ?2, generation = ?3, last_active = ?4 WHERE id = ?1 AND state = 'active'
            """)
        try statement.bind(1, id)
        try statement.bind(2, state.rawValue)
        try statement.bind(3, generation)
        try statement.bind(4, now.nanosecondsSinceEpoch)
        try statement.run()
        return db.changes == 1
    }

    /// The statements that run over many sessions (see `schema` on the indexes they read).
    static let activeBytesSQL = "SELECT COALESCE(SUM(size), 0) FROM staging WHERE state = 'active'"
    static let expireSQL = "DELETE FROM staging WHERE last_active < ?1"
    static let activeIDsSQL = "SELECT id FROM staging WHERE state = 'active'"

    /// Bytes held by active sessions (for the staging ceiling).
    static func activeBytes(_ db: SQLiteDatabase) throws(StorageError) -> Int64 {
        let statement = try db.statement(activeBytesSQL)
        return try statement.step() ? statement.int64(0) : 0
    }

    /// Forgets sessions (active or closed) untouched since `idleBefore` (nanoseconds since the epoch).
    static func expire(_ db: SQLiteDatabase, idleBefore: Int64) throws(StorageError) {
        let statement = try db.statement(expireSQL)
        try statement.bind(1, idleBefore)
        try statement.run()
    }

    static func activeIDs(_ db: SQLiteDatabase) throws(StorageError) -> Set<ExactString> {
        let statement = try db.statement(activeIDsSQL)
        var ids = Set<ExactString>()
        while try statement.step() { if let id = statement.text(0) { ids.insert(ExactString(id)) } }
        return ids
    }
}
