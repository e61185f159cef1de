import PortcullisCore
import Testing

@testable import Storage

/// An index written before the `custom_time` and `owner` columns existed opens, keeps its objects (live and
/// noncurrent), and takes custom times and owners.
@Suite struct EmbeddedMigrationTests {
    /// The `objects` table as earlier versions created it.
    static let earlierObjects = """
        CREATE TABLE objects (
            bucket TEXT COLLATE BINARY NOT NULL, name BLOB NOT NULL, generation INTEGER NOT NULL,
            metageneration INTEGER NOT NULL, size INTEGER NOT NULL, md5 TEXT, crc32c TEXT,
            storage_class TEXT NOT NULL, content_type TEXT, content_encoding TEXT, content_disposition TEXT,
            content_language TEXT, cache_control TEXT, custom_metadata TEXT NOT NULL, download_tokens TEXT NOT NULL,
            time_created INTEGER NOT NULL, updated INTEGER NOT NULL, blob_id INTEGER NOT NULL,
            PRIMARY KEY (bucket, name)
        ) WITHOUT ROWID;
        INSERT INTO objects VALUES ('embedded-bucket', CAST('old' AS BLOB), 7, 1, 0, NULL, NULL, 'STANDARD',
            'text/plain', NULL, NULL, NULL, NULL, '{}', '[]', 1000, 1000, 7);
        """

    @Test func anEarlierIndexGainsTheCustomTimeColumn() async throws {
        let directory = TemporaryDirectory()
        let layout = DirectoryLayout(root: FileSystem.canonicalPath(directory.path)!)
        do {
            let raw = try SQLiteDatabase(path: layout.index, busyTimeoutMilliseconds: 1000)
            try raw.execute(Self.earlierObjects)
            raw.releaseStatements()
        }
        let backend = try EmbeddedBackendTests.openBackend(directory)
        let old = try await backend.metadata(of: EmbeddedBackendTests.path("old"))
        #expect(old.generation == 7 && old.contentType == "text/plain" && old.customTime == nil)
        var patch = MetadataPatch()
        let time = Timestamp(nanosecondsSinceEpoch: 1_900_000_000_000_000_000)
        patch.customTime = .set(time)
        _ = try await backend.updateMetadata(
            EmbeddedBackendTests.path("old"), patch: patch, preconditions: Preconditions())
        #expect(try await backend.metadata(of: EmbeddedBackendTests.path("old")).customTime == time)
        // Opening it again (the column now exists) changes nothing.
        let reopened = try EmbeddedBackendTests.openBackend(directory)
        #expect(try await reopened.metadata(of: EmbeddedBackendTests.path("old")).customTime == time)
    }

    /// Both object tables as the version before `owner` created them.
    static let beforeOwner = """
        CREATE TABLE objects (
            bucket TEXT COLLATE BINARY NOT NULL, name BLOB NOT NULL, generation INTEGER NOT NULL,
            metageneration INTEGER NOT NULL, size INTEGER NOT NULL, md5 TEXT, crc32c TEXT,
            storage_class TEXT NOT NULL, content_type TEXT, content_encoding TEXT, content_disposition TEXT,
            content_language TEXT, cache_control TEXT, custom_metadata TEXT NOT NULL, download_tokens TEXT NOT NULL,
            time_created INTEGER NOT NULL, updated INTEGER NOT NULL, blob_id INTEGER NOT NULL, custom_time INTEGER,
            PRIMARY KEY (bucket, name)
        ) WITHOUT ROWID;
        CREATE TABLE noncurrent_objects (
            bucket TEXT COLLATE BINARY NOT NULL, name BLOB NOT NULL, generation INTEGER NOT NULL,
            metageneration INTEGER NOT NULL, size INTEGER NOT NULL, md5 TEXT, crc32c TEXT,
            storage_class TEXT NOT NULL, content_type TEXT, content_encoding TEXT, content_disposition TEXT,
            content_language TEXT, cache_control TEXT, custom_metadata TEXT NOT NULL, download_tokens TEXT NOT NULL,
            time_created INTEGER NOT NULL, updated INTEGER NOT NULL, blob_id INTEGER NOT NULL, custom_time INTEGER,
            time_deleted INTEGER NOT NULL,
            PRIMARY KEY (bucket, name, generation)
        ) WITHOUT ROWID;
        INSERT INTO objects VALUES ('embedded-bucket', CAST('old' AS BLOB), 9, 1, 0, NULL, NULL, 'STANDARD',
            'text/plain', NULL, NULL, NULL, NULL, '{}', '[]', 1000, 1000, 9, NULL);
        INSERT INTO noncurrent_objects VALUES ('embedded-bucket', CAST('old' AS BLOB), 8, 1, 0, NULL, NULL,
            'STANDARD', 'text/csv', NULL, NULL, NULL, NULL, '{}', '[]', 900, 900, 8, NULL, 1000);
        """

    @Test func anIndexBeforeOwnersGainsTheColumnInBothTables() async throws {
        let directory = TemporaryDirectory()
        let layout = DirectoryLayout(root: FileSystem.canonicalPath(directory.path)!)
        do {
            let raw = try SQLiteDatabase(path: layout.index, busyTimeoutMilliseconds: 1000)
            try raw.execute(Self.beforeOwner)
            raw.releaseStatements()
        }
        let backend = try EmbeddedBackendTests.openBackend(directory)
        let old = try await backend.metadata(of: EmbeddedBackendTests.path("old"))
        #expect(old.generation == 9 && old.owner == nil)
        // The noncurrent row reads with its time deleted where it was (the column after `owner`).
        let kept = try await backend.metadata(of: EmbeddedBackendTests.path("old"), generation: 8)
        #expect(kept.contentType == "text/csv" && kept.owner == nil)
        #expect(kept.timeDeleted == Timestamp(nanosecondsSinceEpoch: 1000))

        var attributes = ObjectAttributes(contentType: "text/plain")
        attributes.owner = "user-alice"
        let written = try await backend.write(
            EmbeddedBackendTests.path("new"), body: BufferByteStream(Array("abc".utf8)), attributes: attributes,
            options: WriteOptions())
        #expect(written.owner == "user-alice")
        let reopened = try EmbeddedBackendTests.openBackend(directory)
        #expect(try await reopened.metadata(of: EmbeddedBackendTests.path("new")).owner == "user-alice")
        #expect(try await reopened.metadata(of: EmbeddedBackendTests.path("old")).owner == nil)
    }
}
