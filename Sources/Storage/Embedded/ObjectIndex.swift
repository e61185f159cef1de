import PortcullisCore

/// The SQL of the object index: schema, row ↔ `ObjectMetadata` mapping, and the statements every operation
/// uses. Stateless; every function runs on the connection it is given (reader or writer lane).
///
/// Names are stored as BLOBs of their UTF-8 bytes: SQLite compares BLOBs with `memcmp`, so the primary key
/// `(bucket, name)` of the `WITHOUT ROWID` table orders each bucket's names in UTF-8 byte order, and a list
/// page is a range scan of that key. Bucket names and ids are TEXT with the `BINARY` collation (`memcmp` of
/// the UTF-8; SQLite's default, spelled out because identity must never depend on a collation): canonically
/// equivalent spellings are different keys here, as everywhere.
enum ObjectIndex {
    /// The columns of every object row, live (`objects`) or noncurrent (`noncurrent_objects`), after its
    /// `bucket` and `name`, in the order `columns` lists them (statements read and bind them by position).
    private static let objectColumns: [(name: String, type: String)] = [
        ("generation", "INTEGER NOT NULL"), ("metageneration", "INTEGER NOT NULL"), ("size", "INTEGER NOT NULL"),
        ("md5", "TEXT"), ("crc32c", "TEXT"), ("storage_class", "TEXT NOT NULL"), ("content_type", "TEXT"),
        ("content_encoding", "TEXT"), ("content_disposition", "TEXT"), ("content_language", "TEXT"),
        ("cache_control", "TEXT"), ("custom_metadata", "TEXT NOT NULL"), ("download_tokens", "TEXT NOT NULL"),
        ("time_created", "INTEGER NOT NULL"), ("updated", "INTEGER NOT NULL"), ("blob_id", "INTEGER NOT NULL"),
        ("custom_time", "INTEGER"), ("owner", "TEXT"),
    ]

    /// The object columns as a statement lists them.
    static let columns = objectColumns.map(\.name).joined(separator: ", ")

    /// The object columns as a table declares them.
    private static let columnDefinitions = objectColumns.map { "\($0.name) \($0.type)" }.joined(separator: ",\n")

    static let schema = """
        CREATE TABLE IF NOT EXISTS buckets (
            name TEXT COLLATE BINARY PRIMARY KEY NOT NULL,
            time_created INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS counters (
            key TEXT PRIMARY KEY NOT NULL,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS objects (
            bucket TEXT COLLATE BINARY NOT NULL,
            name BLOB NOT NULL,
            \(columnDefinitions),
            PRIMARY KEY (bucket, name)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS objects_by_blob ON objects (blob_id);
        CREATE TABLE IF NOT EXISTS noncurrent_objects (
            bucket TEXT COLLATE BINARY NOT NULL,
            name BLOB NOT NULL,
            \(columnDefinitions),
            time_deleted INTEGER NOT NULL,
            PRIMARY KEY (bucket, name, generation)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS noncurrent_objects_by_blob ON noncurrent_objects (blob_id);
        """

    /// Brings an index written by an earlier version to this schema: the `custom_time` and `owner` columns of
    /// both object tables (absent: no object has a custom time or a recorded owner). Idempotent; run in one
    /// immediate transaction so processes sharing the directory cannot both add them.
    static func migrate(_ db: SQLiteDatabase) throws(StorageError) {
        try db.transaction(immediate: true) { () throws(StorageError) in
            for table in ["objects", "noncurrent_objects"] {
                let columns = try db.statement("SELECT name FROM pragma_table_info('\(table)')")
                var present: [String] = []
                while try columns.step() { if let name = columns.text(0) { present.append(name) } }
                for (column, type) in [("custom_time", "INTEGER"), ("owner", "TEXT")]
                where !present.contains(where: { $0.utf8.elementsEqual(column.utf8) }) {
                    try db.execute("ALTER TABLE \(table) ADD COLUMN \(column) \(type)")
                }
            }
        }
    }

    /// Built once and found by identity (`StatementText`): this runs on every metadata read.
    private static let fetchSQL = StatementText("SELECT \(columns) FROM objects WHERE bucket = ?1 AND name = ?2")

    /// The current row of `bucket`/`name`, if any.
    static func fetch(_ db: SQLiteDatabase, bucket: String, name: String) throws(StorageError) -> StoredObject? {
        let statement = try db.statement(fetchSQL)
        try statement.bind(1, bucket)
        try statement.bind(2, blobUTF8: name)
        guard try statement.step() else { return nil }
        return decode(statement, bucket: bucket, name: name)
    }

    /// The row `statement` stands on, its columns `columns` from index 0 (a `noncurrent_objects` row adds
    /// `time_deleted` as column 18).
    static func decode(_ statement: SQLiteStatement, bucket: String, name: String, noncurrent: Bool = false)
        -> StoredObject
    {
        var metadata = ObjectMetadata(
            bucket: bucket, name: name,
            generation: statement.int64(0), metageneration: statement.int64(1), size: statement.int64(2),
            timeCreated: Timestamp(nanosecondsSinceEpoch: statement.int64(13)),
            updated: Timestamp(nanosecondsSinceEpoch: statement.int64(14)),
            md5Hash: statement.text(3), crc32c: statement.text(4),
            storageClass: statement.text(5) ?? "STANDARD",
            contentType: statement.text(6), contentEncoding: statement.text(7),
            contentDisposition: statement.text(8), contentLanguage: statement.text(9),
            cacheControl: statement.text(10),
            customMetadata: statement.withTextBytes(11) { MetadataCoding.decodeMap(bytes: $0) },
            downloadTokens: statement.withTextBytes(12) { MetadataCoding.decodeList(bytes: $0) },
            customTime: statement.isNull(16) ? nil : Timestamp(nanosecondsSinceEpoch: statement.int64(16)))
        metadata.owner = statement.text(17)
        if noncurrent { metadata.timeDeleted = Timestamp(nanosecondsSinceEpoch: statement.int64(18)) }
        return StoredObject(metadata: metadata, blobID: statement.int64(15))
    }

    /// Inserts or replaces the row of `object.metadata.bucket`/`name`.
    static func upsert(_ db: SQLiteDatabase, _ object: StoredObject) throws(StorageError) {
        let statement = try db.statement(
            """
            INSERT OR REPLACE INTO objects (bucket, name, \(columns))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)
            """)
        try bindRow(statement, object)
        try statement.run()
    }

    /// Binds `object`'s `bucket`, `name` and `columns` as parameters 1–20.
    static func bindRow(_ statement: SQLiteStatement, _ object: StoredObject) throws(StorageError) {
        let m = object.metadata
        try statement.bind(1, m.bucket)
        try statement.bind(2, blobUTF8: m.name)
        try statement.bind(3, m.generation)
        try statement.bind(4, m.metageneration)
        try statement.bind(5, m.size)
        try statement.bind(6, m.md5Hash)
        try statement.bind(7, m.crc32c)
        try statement.bind(8, m.storageClass)
        try statement.bind(9, m.contentType)
        try statement.bind(10, m.contentEncoding)
        try statement.bind(11, m.contentDisposition)
        try statement.bind(12, m.contentLanguage)
        try statement.bind(13, m.cacheControl)
        try statement.bind(14, MetadataCoding.encode(m.customMetadata))
        try statement.bind(15, MetadataCoding.encode(m.downloadTokens))
        try statement.bind(16, m.timeCreated.nanosecondsSinceEpoch)
        try statement.bind(17, m.updated.nanosecondsSinceEpoch)
        try statement.bind(18, object.blobID)
        try statement.bind(19, m.customTime?.nanosecondsSinceEpoch)
        try statement.bind(20, m.owner)
    }

    static func remove(_ db: SQLiteDatabase, bucket: String, name: String) throws(StorageError) {
        let statement = try db.statement("DELETE FROM objects WHERE bucket = ?1 AND name = ?2")
        try statement.bind(1, bucket)
        try statement.bind(2, blobUTF8: name)
        try statement.run()
    }

    /// Whether any object row, live or noncurrent, points at blob file `blobID` (orphan detection).
    static func isReferenced(_ db: SQLiteDatabase, blobID: Int64) throws(StorageError) -> Bool {
        for table in ["objects", "noncurrent_objects"] {
            let statement = try db.statement("SELECT 1 FROM \(table) WHERE blob_id = ?1 LIMIT 1")
            try statement.bind(1, blobID)
            if try statement.step() { return true }
        }
        return false
    }

    /// Allocates a generation strictly greater than every generation handed out in this directory, and at
    /// least the current time in microseconds (the scale production Firebase uses). Must run inside a write
    /// transaction, so processes sharing the directory never hand out the same number.
    static func allocateGeneration(_ db: SQLiteDatabase, now: Timestamp) throws(StorageError) -> Int64 {
        let read = try db.statement("SELECT value FROM counters WHERE key = 'generation'")
        let previous = try read.step() ? read.int64(0) : 0
        let generation = max(now.nanosecondsSinceEpoch / 1000, previous + 1)
        let write = try db.statement("INSERT OR REPLACE INTO counters (key, value) VALUES ('generation', ?1)")
        try write.bind(1, generation)
        try write.run()
        return generation
    }

    static func registerBucket(_ db: SQLiteDatabase, _ bucket: String, now: Timestamp) throws(StorageError) {
        let statement = try db.statement("INSERT OR IGNORE INTO buckets (name, time_created) VALUES (?1, ?2)")
        try statement.bind(1, bucket)
        try statement.bind(2, now.nanosecondsSinceEpoch)
        try statement.run()
    }
}
