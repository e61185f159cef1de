import PortcullisCore
import Testing

@testable import Storage

/// An index written before the `custom_time` column existed opens, keeps its objects, and takes custom times.
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
}
