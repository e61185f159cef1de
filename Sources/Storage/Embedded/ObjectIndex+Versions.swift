import PortcullisCore

/// The SQL of noncurrent generations (`noncurrent_objects`): what a bucket with versioning enabled keeps when
/// its live object is overwritten or deleted. A row is the live row as it was, plus `time_deleted`; it keeps
/// the blob file its live row pointed at, so archiving copies no bytes. The table sits in the same database as
/// `objects`, so archiving and replacing the live row commit in one transaction: a crash leaves the old live
/// object and no new one, or the new one live and the old one noncurrent.
extension ObjectIndex {
    /// Whether `bucket` keeps noncurrent generations now: its `versioning.enabled` as the bucket API stores it
    /// (`provisioned_buckets`). A bucket named by configuration has no row there and keeps none.
    static func isVersioned(_ db: SQLiteDatabase, bucket: String) throws(StorageError) -> Bool {
        let statement = try db.statement("SELECT versioning FROM provisioned_buckets WHERE name = ?1")
        try statement.bind(1, bucket)
        return try statement.step() && statement.int64(0) != 0
    }

    /// Copies the live row of `bucket`/`name` into `noncurrent_objects`, stamped `timeDeleted`. The caller
    /// replaces or removes the live row in the same transaction and keeps its blob file.
    static func archive(_ db: SQLiteDatabase, bucket: String, name: String, timeDeleted: Timestamp)
        throws(StorageError)
    {
        let statement = try db.statement(
            """
            INSERT OR REPLACE INTO noncurrent_objects (bucket, name, \(columns), time_deleted)
            SELECT bucket, name, \(columns), ?3 FROM objects WHERE bucket = ?1 AND name = ?2
            """)
        try statement.bind(1, bucket)
        try statement.bind(2, blobUTF8: name)
        try statement.bind(3, timeDeleted.nanosecondsSinceEpoch)
        try statement.run()
    }

    /// The noncurrent row of `bucket`/`name` at `generation`, if kept.
    static func fetchNoncurrent(_ db: SQLiteDatabase, bucket: String, name: String, generation: Int64)
        throws(StorageError) -> StoredObject?
    {
        let statement = try db.statement(
            """
            SELECT \(columns), time_deleted FROM noncurrent_objects
            WHERE bucket = ?1 AND name = ?2 AND generation = ?3
            """)
        try statement.bind(1, bucket)
        try statement.bind(2, blobUTF8: name)
        try statement.bind(3, generation)
        guard try statement.step() else { return nil }
        return decode(statement, bucket: bucket, name: name, noncurrent: true)
    }

    /// The row of `bucket`/`name` at `generation`, live or noncurrent.
    static func fetch(_ db: SQLiteDatabase, bucket: String, name: String, generation: Int64)
        throws(StorageError) -> StoredObject?
    {
        if let live = try fetch(db, bucket: bucket, name: name), live.metadata.generation == generation {
            return live
        }
        return try fetchNoncurrent(db, bucket: bucket, name: name, generation: generation)
    }

    /// Every noncurrent row of `bucket`/`name`, oldest generation first.
    static func noncurrent(_ db: SQLiteDatabase, bucket: String, name: String) throws(StorageError)
        -> [StoredObject]
    {
        let statement = try db.statement(
            """
            SELECT \(columns), time_deleted FROM noncurrent_objects
            WHERE bucket = ?1 AND name = ?2 ORDER BY generation
            """)
        try statement.bind(1, bucket)
        try statement.bind(2, blobUTF8: name)
        var rows: [StoredObject] = []
        while try statement.step() { rows.append(decode(statement, bucket: bucket, name: name, noncurrent: true)) }
        return rows
    }

    /// Replaces the noncurrent row of `object`'s name at its generation (a metadata update of a kept generation;
    /// `timeDeleted` stays as archived).
    static func replaceNoncurrent(_ db: SQLiteDatabase, _ object: StoredObject) throws(StorageError) {
        guard let timeDeleted = object.metadata.timeDeleted else { return }
        let statement = try db.statement(
            """
            INSERT OR REPLACE INTO noncurrent_objects (bucket, name, \(columns), time_deleted)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)
            """)
        try bindRow(statement, object)
        try statement.bind(21, timeDeleted.nanosecondsSinceEpoch)
        try statement.run()
    }

    static func removeNoncurrent(_ db: SQLiteDatabase, bucket: String, name: String, generation: Int64)
        throws(StorageError)
    {
        let statement = try db.statement(
            "DELETE FROM noncurrent_objects WHERE bucket = ?1 AND name = ?2 AND generation = ?3")
        try statement.bind(1, bucket)
        try statement.bind(2, blobUTF8: name)
        try statement.bind(3, generation)
        try statement.run()
    }
}
