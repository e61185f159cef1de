import PortcullisCore

/// `NameCursor` over the object index: a range scan of the `(bucket, name)` primary key, re-positioned with
/// one B-tree descent per `seek`. Rows are stepped one at a time, so a page reads only the rows it uses.
/// Confined to the reader lane whose connection it uses, inside one read transaction (one snapshot per page).
struct IndexNameCursor: NameCursor {
    private let statement: SQLiteStatement
    private let bucket: String
    private let upperBound: [UInt8]
    private var exhausted = true

    /// `upperBound`: the exclusive end of the prefix range; nil means the end of the bucket. UTF-8 never
    /// contains the byte 0xFF, so `[0xFF]` is above every name. `includeNoncurrent` also walks the names that
    /// only noncurrent generations still hold (`versions=true`), each name once.
    init(database: SQLiteDatabase, bucket: String, upperBound: [UInt8]?, includeNoncurrent: Bool = false)
        throws(StorageError)
    {
        statement = try database.statement(
            includeNoncurrent
                ? """
                SELECT name FROM objects WHERE bucket = ?1 AND name >= ?2 AND name < ?3
                UNION SELECT name FROM noncurrent_objects WHERE bucket = ?1 AND name >= ?2 AND name < ?3
                ORDER BY name
                """
                : "SELECT name FROM objects WHERE bucket = ?1 AND name >= ?2 AND name < ?3 ORDER BY name")
        self.bucket = bucket
        self.upperBound = upperBound ?? [0xFF]
    }

    mutating func seek(_ key: [UInt8]) throws(StorageError) {
        statement.reset()
        try statement.bind(1, bucket)
        try statement.bind(2, blob: key)
        try statement.bind(3, blob: upperBound)
        exhausted = false
    }

    mutating func next() throws(StorageError) -> [UInt8]? {
        guard !exhausted else { return nil }
        guard try statement.step() else {
            exhausted = true
            return nil
        }
        return statement.blob(0)
    }
}
