public import PortcullisCore

/// Buckets created through the API in one embedded store (`--bucket-root file:DIR`): each is an embedded bucket
/// of that store, so they share its index, its blob directory and its durability. The settings the API may set
/// live in the store's index (`provisioned_buckets`), beside the `buckets` table every embedded bucket has; a
/// row there is what makes a bucket one the API created, found again at start-up.
public final class EmbeddedBucketRoot: BucketProvisioning {
    static let schema = """
        CREATE TABLE IF NOT EXISTS provisioned_buckets (
            name TEXT COLLATE BINARY PRIMARY KEY NOT NULL,
            time_created INTEGER NOT NULL,
            updated INTEGER NOT NULL,
            metageneration INTEGER NOT NULL,
            versioning INTEGER NOT NULL,
            labels TEXT NOT NULL
        ) WITHOUT ROWID;
        """

    private let store: EmbeddedStore

    public init(directory: String, options: EmbeddedOptions = EmbeddedOptions()) throws(StorageError) {
        store = try EmbeddedStore.shared(directory: directory, options: options)
        try store.writer.runSync { (db) throws(StorageError) in try db.execute(Self.schema) }
    }

    public func existingBuckets() async throws(StorageError) -> [ProvisionedBucket] {
        let rows = try await store.writer.run { (db) throws(StorageError) -> [Row] in
            let statement = try db.statement("SELECT \(Row.columns) FROM provisioned_buckets ORDER BY name")
            var rows: [Row] = []
            while try statement.step() { rows.append(Row(statement)) }
            return rows
        }
        return rows.map(provisioned)
    }

    public func createBucket(_ name: String, settings: BucketSettings) async throws(StorageError)
        -> ProvisionedBucket
    {
        let now = Timestamp.now()
        let labels = Self.encode(settings.labels)
        let row = try await store.writer.run { (db) throws(StorageError) -> Row in
            try db.transaction(immediate: true) { () throws(StorageError) -> Row in
                let exists = try db.statement("SELECT 1 FROM buckets WHERE name = ?1")
                try exists.bind(1, name)
                if try exists.step() { throw .conflict("You already own this bucket. Please select another name.") }
                try ObjectIndex.registerBucket(db, name, now: now)
                let insert = try db.statement(
                    """
                    INSERT INTO provisioned_buckets (name, time_created, updated, metageneration, versioning, labels)
                    VALUES (?1, ?2, ?2, 1, ?3, ?4)
                    """)
                try insert.bind(1, name)
                try insert.bind(2, now.nanosecondsSinceEpoch)
                try insert.bind(3, settings.versioningEnabled ? 1 : 0)
                try insert.bind(4, labels)
                try insert.run()
                return Row(
                    name: name, timeCreated: now.nanosecondsSinceEpoch, updated: now.nanosecondsSinceEpoch,
                    metageneration: 1, versioning: settings.versioningEnabled, labels: labels)
            }
        }
        try FileSystem.makeDirectory(store.layout.blobDirectory(bucket: name))
        return provisioned(row)
    }

    public func updateBucket(_ name: String, settings: BucketSettings, ifMetagenerationMatch: Int64?)
        async throws(StorageError) -> ProvisionedBucket
    {
        let now = Timestamp.now()
        let labels = Self.encode(settings.labels)
        let row = try await store.writer.run { (db) throws(StorageError) -> Row in
            try db.transaction(immediate: true) { () throws(StorageError) -> Row in
                guard var row = try Self.fetch(db, name) else { throw .bucketNotFound(name) }
                if let expected = ifMetagenerationMatch, expected != row.metageneration { throw .preconditionFailed }
                let update = try db.statement(
                    """
                    UPDATE provisioned_buckets SET updated = ?2, metageneration = metageneration + 1,
                        versioning = ?3, labels = ?4 WHERE name = ?1
                    """)
                try update.bind(1, name)
                try update.bind(2, now.nanosecondsSinceEpoch)
                try update.bind(3, settings.versioningEnabled ? 1 : 0)
                try update.bind(4, labels)
                try update.run()
                row.updated = now.nanosecondsSinceEpoch
                row.metageneration += 1
                row.versioning = settings.versioningEnabled
                row.labels = labels
                return row
            }
        }
        return provisioned(row)
    }

    /// Deletes an empty bucket. Only objects make a bucket non-empty, as in Cloud Storage: resumable-upload
    /// sessions are not objects, so the bucket's sessions (finished ones kept for their status, and unfinished
    /// ones) go with it — a later chunk of one finds no session — and their staged bytes are removed.
    public func deleteBucket(_ name: String) async throws(StorageError) {
        let staged = try await store.writer.run { (db) throws(StorageError) -> [String] in
            try db.transaction(immediate: true) { () throws(StorageError) -> [String] in
                guard try Self.fetch(db, name) != nil else { throw .bucketNotFound(name) }
                for table in ["objects", "noncurrent_objects"] {
                    let used = try db.statement("SELECT 1 FROM \(table) WHERE bucket = ?1 LIMIT 1")
                    try used.bind(1, name)
                    if try used.step() { throw .conflict("The bucket you tried to delete is not empty.") }
                }
                let sessions = try db.statement("SELECT id FROM staging WHERE bucket = ?1 AND state = 'active'")
                try sessions.bind(1, name)
                var staged: [String] = []
                while try sessions.step() { if let id = sessions.text(0) { staged.append(id) } }
                for (table, column) in [("staging", "bucket"), ("provisioned_buckets", "name"), ("buckets", "name")] {
                    let delete = try db.statement("DELETE FROM \(table) WHERE \(column) = ?1")
                    try delete.bind(1, name)
                    try delete.run()
                }
                return staged
            }
        }
        for id in staged {
            store.stagedChecksums.withLock { map in map[ExactString(id)] = nil }
            await store.blobs.remove(store.layout.stagingFile(id))
        }
        // An empty bucket's blob directory is empty; a name created again gets it back.
        FileSystem.removeDirectory(store.layout.blobDirectory(bucket: name))
    }

    private func provisioned(_ row: Row) -> ProvisionedBucket {
        ProvisionedBucket(
            name: row.name, timeCreated: Timestamp(nanosecondsSinceEpoch: row.timeCreated),
            updated: Timestamp(nanosecondsSinceEpoch: row.updated), metageneration: row.metageneration,
            settings: BucketSettings(versioningEnabled: row.versioning, labels: Self.decode(row.labels)),
            backend: EmbeddedBackend(store: store, bucket: row.name))
    }

    private static func fetch(_ db: SQLiteDatabase, _ name: String) throws(StorageError) -> Row? {
        let statement = try db.statement("SELECT \(Row.columns) FROM provisioned_buckets WHERE name = ?1")
        try statement.bind(1, name)
        return try statement.step() ? Row(statement) : nil
    }

    private static func encode(_ labels: [String: String]) -> String {
        JSONValue.object(labels.mapValues { .string($0) }).encoded()
    }

    private static func decode(_ text: String) -> [String: String] {
        guard case .object(let members)? = try? JSONValue.parse(text) else { return [:] }
        return members.compactMapValues(\.stringValue)
    }

    /// One `provisioned_buckets` row.
    private struct Row: Sendable {
        static let columns = "name, time_created, updated, metageneration, versioning, labels"
        var name: String
        var timeCreated: Int64
        var updated: Int64
        var metageneration: Int64
        var versioning: Bool
        var labels: String

        init(name: String, timeCreated: Int64, updated: Int64, metageneration: Int64, versioning: Bool, labels: String)
        {
            self.name = name
            self.timeCreated = timeCreated
            self.updated = updated
            self.metageneration = metageneration
            self.versioning = versioning
            self.labels = labels
        }

        init(_ statement: SQLiteStatement) {
            self.init(
                name: statement.text(0) ?? "", timeCreated: statement.int64(1), updated: statement.int64(2),
                metageneration: statement.int64(3), versioning: statement.int64(4) != 0,
                labels: statement.text(5) ?? "{}")
        }
    }
}
