import Foundation
import PortcullisCore
import Testing

@testable import Storage

/// The inline readers' row cache: pure transitions on synthetic versions, the WAL-index watch on a real index,
/// and reads through `InlineReaders` while another connection commits.
@Suite struct IndexRowCacheTests {
    static func version(_ counter: UInt64) -> WALIndexVersion { WALIndexVersion(words: (7, counter, 0, 0, 0, 0)) }

    static func row(_ name: String, generation: Int64) -> StoredObject {
        let metadata = ObjectMetadata(
            bucket: "b", name: name, generation: generation, size: 1,
            timeCreated: Timestamp(nanosecondsSinceEpoch: 0), updated: Timestamp(nanosecondsSinceEpoch: 0))
        return StoredObject(metadata: metadata, blobID: generation)
    }

    static let a = IndexRowCache.Key(bucket: "b", name: "a")

    @Test func aRowIsReturnedOnlyWhileTheVersionItWasReadAtHolds() {
        var cache = IndexRowCache(capacity: 8)
        #expect(cache.entry(Self.a, at: Self.version(1)) == nil)
        cache.remember(Self.row("a", generation: 5), for: Self.a, readAt: Self.version(1))
        #expect(cache.entry(Self.a, at: Self.version(1))?.row == Self.row("a", generation: 5))
        #expect(cache.entry(Self.a, at: Self.version(2)) == nil, "a commit since: look it up again")
        #expect(cache.count == 0)
        #expect(cache.entry(Self.a, at: Self.version(1)) == nil, "forgotten, even if an old version came back")
    }

    @Test func absenceIsKnownLikeARow() {
        var cache = IndexRowCache(capacity: 8)
        _ = cache.entry(Self.a, at: Self.version(1))
        cache.remember(nil, for: Self.a, readAt: Self.version(1))
        let known = cache.entry(Self.a, at: Self.version(1))
        #expect(known != nil && known!.row == nil, "known absent, not unknown")
    }

    /// A lookup whose version was read before another lookup moved the cache to a newer version is not kept:
    /// its row may predate the newer commit.
    @Test func aLookupStartedAtAnotherVersionIsNotKept() {
        var cache = IndexRowCache(capacity: 8)
        _ = cache.entry(Self.a, at: Self.version(2))
        cache.remember(Self.row("a", generation: 1), for: Self.a, readAt: Self.version(1))
        #expect(cache.entry(Self.a, at: Self.version(2)) == nil)
        #expect(cache.count == 0)
    }

    @Test func aFullCacheStartsOverAndKeepsTheNewRow() {
        var cache = IndexRowCache(capacity: 2)
        let version = Self.version(1)
        for name in ["x", "y", "z"] {
            let key = IndexRowCache.Key(bucket: "b", name: name)
            _ = cache.entry(key, at: version)
            cache.remember(Self.row(name, generation: 1), for: key, readAt: version)
        }
        #expect(cache.count == 1)
        #expect(cache.entry(IndexRowCache.Key(bucket: "b", name: "z"), at: version) != nil)
        #expect(cache.entry(IndexRowCache.Key(bucket: "b", name: "x"), at: version) == nil)
    }

    @Test func noCapacityKeepsNothing() {
        var cache = IndexRowCache(capacity: 0)
        _ = cache.entry(Self.a, at: Self.version(1))
        cache.remember(Self.row("a", generation: 1), for: Self.a, readAt: Self.version(1))
        #expect(cache.entry(Self.a, at: Self.version(1)) == nil)
    }

    /// Names are keys by their bytes: the composed and decomposed spellings of "café" are two objects.
    @Test func keysAreBytes() {
        var cache = IndexRowCache(capacity: 8)
        let composed = IndexRowCache.Key(bucket: "b", name: "caf\u{E9}")
        let decomposed = IndexRowCache.Key(bucket: "b", name: "cafe\u{301}")
        _ = cache.entry(composed, at: Self.version(1))
        cache.remember(Self.row("caf\u{E9}", generation: 1), for: composed, readAt: Self.version(1))
        #expect(cache.entry(decomposed, at: Self.version(1)) == nil)
        #expect(cache.entry(IndexRowCache.Key(bucket: "c", name: "caf\u{E9}"), at: Self.version(1)) == nil)
    }

    /// Bytes are kept with a known row of their size, up to `largestContent` each and the budget in all; they
    /// go with their row when the version changes, and the budget is free again.
    @Test func contentIsKeptWithItsRowWithinTheBudget() {
        var cache = IndexRowCache(capacity: 8, contentBudget: 20_000)
        let version = Self.version(1)
        func put(_ name: String, size: Int64) -> IndexRowCache.Key {
            let key = IndexRowCache.Key(bucket: "b", name: name)
            var row = Self.row(name, generation: 1)
            row.metadata.size = size
            _ = cache.entry(key, at: version)
            cache.remember(row, for: key, readAt: version)
            cache.remember(content: [UInt8](repeating: 7, count: Int(size)), for: key, readAt: version)
            return key
        }
        let small = put("small", size: 3)
        #expect(cache.entry(small, at: version)?.content == [7, 7, 7])
        #expect(cache.contentBytes == 3)

        let large = put("large", size: Int64(IndexRowCache.largestContent) + 1)
        #expect(cache.entry(large, at: version)?.row != nil)
        #expect(cache.entry(large, at: version)?.content == nil, "larger than largestContent")

        let first = put("first", size: 16_000)
        let second = put("second", size: 16_000)
        #expect(cache.entry(first, at: version)?.content?.count == 16_000)
        #expect(cache.entry(second, at: version)?.content == nil, "over the budget")
        #expect(cache.contentBytes == 16_003)

        let key = IndexRowCache.Key(bucket: "b", name: "mismatch")
        cache.remember(Self.row("mismatch", generation: 1), for: key, readAt: version)
        cache.remember(content: [1, 2], for: key, readAt: version)
        #expect(cache.entry(key, at: version)?.content == nil, "bytes of another size than the row's are not its")
        cache.remember(content: [1], for: IndexRowCache.Key(bucket: "b", name: "unknown"), readAt: version)
        #expect(cache.entry(IndexRowCache.Key(bucket: "b", name: "unknown"), at: version) == nil)

        #expect(cache.entry(small, at: Self.version(2)) == nil)
        #expect(cache.contentBytes == 0)
    }

    @Test func noBudgetKeepsNoContent() {
        var cache = IndexRowCache(capacity: 8)
        _ = cache.entry(Self.a, at: Self.version(1))
        cache.remember(Self.row("a", generation: 1), for: Self.a, readAt: Self.version(1))
        cache.remember(content: [1], for: Self.a, readAt: Self.version(1))
        #expect(cache.entry(Self.a, at: Self.version(1))?.content == nil)
    }

    // MARK: - On a real index

    /// The header names each committed state: unchanged without commits, changed by a commit of any
    /// connection (here one that is not the store's, as another process's would be).
    @Test func theWatchSeesEveryCommit() async throws {
        let directory = TemporaryDirectory()
        let backend = try EmbeddedBackendTests.openBackend(directory)
        let reader = try SQLiteDatabase(path: backend.store.layout.index, busyTimeoutMilliseconds: 0)
        let watch = try #require(try WALIndexWatch(connection: reader))
        let first = try #require(watch.version())
        #expect(watch.version() == first)
        _ = try await EmbeddedBackendTests.put(backend, "a", [1])
        let second = try #require(watch.version())
        #expect(second != first)
        let foreign = try SQLiteDatabase(path: backend.store.layout.index, busyTimeoutMilliseconds: 5000)
        try foreign.execute("UPDATE objects SET metageneration = metageneration + 1;")
        let third = try #require(watch.version())
        #expect(third != second)
        try foreign.execute("UPDATE objects SET metageneration = metageneration WHERE 0;")
        #expect(watch.version() == third, "a transaction that changes nothing commits nothing")
    }

    /// Making a watch leaves this process's POSIX locks on the `-shm` file alone (closing any descriptor of
    /// the file would drop them all, SQLite's "DMS" lock included, and let another process reinitialise the
    /// shared memory under the open connections).
    @Test func makingAWatchKeepsSQLitesLocks() throws {
        let directory = TemporaryDirectory()
        let backend = try EmbeddedBackendTests.openBackend(directory)
        let shm = backend.store.layout.index + "-shm"
        let before = try Self.locks(on: shm)
        #expect(!before.isEmpty, "the store's connections hold locks on the shared memory")
        let reader = try SQLiteDatabase(path: backend.store.layout.index, busyTimeoutMilliseconds: 0)
        _ = try #require(try WALIndexWatch(connection: reader))
        #expect(try Self.locks(on: shm) == before)
    }

    /// The byte ranges this process holds POSIX locks on in `path` (from /proc/locks), sorted.
    static func locks(on path: String) throws -> [String] {
        var status = stat()
        guard stat(path, &status) == 0 else { throw POSIXError(.ENOENT) }
        let inode = "\(status.st_ino)"
        let pid = "\(getpid())"
        // Read to the end: `String(contentsOfFile:)` stops after the first 4 KiB of a procfs file, and a process
        // running many tests at once holds more locks than that.
        let data = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/locks")).readToEnd() ?? Data()
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[1] == "POSIX", fields[4] == pid,
                fields[5].split(separator: ":").last.map(String.init) == inode
            else { return nil }
            return "\(fields[3]) \(fields[6])-\(fields[7])"
        }.sorted()
    }

    /// A database without a WAL index (rollback journal) has nothing to watch, and its readers cache nothing.
    @Test func noWALIndexNoCache() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/plain.sqlite"
        let database = try SQLiteDatabase(path: path, busyTimeoutMilliseconds: 0)
        try database.execute(ObjectIndex.schema)
        #expect(try WALIndexWatch(connection: database) == nil)
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"), "no shared memory made for it")
        let readers = try InlineReaders(path: path, count: 1)
        #expect(!readers.isCaching)
        #expect(try readers.fetch(bucket: "b", name: "a")?.get() == .some(nil))
        #expect(try readers.fetch(bucket: "b", name: "a")?.get() == .some(nil))
        #expect(readers.hits == 0)
    }

    /// Reads in place see every commit made since the row was cached — a metadata change, an overwrite, a
    /// delete, a creation — whichever connection made it; between commits, they are answered from the cache.
    @Test func cachedRowsFollowEveryCommit() async throws {
        let directory = TemporaryDirectory()
        let backend = try EmbeddedBackendTests.openBackend(directory)
        let index = backend.store.layout.index
        let readers = try InlineReaders(path: index, count: 1)
        #expect(readers.isCaching)
        let bucket = EmbeddedBackendTests.bucket
        func current() throws -> StoredObject? { try #require(readers.fetch(bucket: bucket, name: "a")).get() }

        #expect(try current() == nil)
        #expect(try current() == nil)
        #expect(readers.hits == 1, "absence is cached")

        let written = try await EmbeddedBackendTests.put(backend, "a", [1, 2, 3])
        #expect(try current()?.metadata == written, "a creation is seen at once")
        #expect(try current()?.metadata == written)
        #expect(readers.hits == 2)

        let foreign = try SQLiteDatabase(path: index, busyTimeoutMilliseconds: 5000)
        try foreign.execute("UPDATE objects SET metageneration = 9 WHERE name = CAST('a' AS BLOB);")
        #expect(try current()?.metadata.metageneration == 9, "another connection's commit is seen at once")

        let overwritten = try await EmbeddedBackendTests.put(backend, "a", [4])
        #expect(try current()?.metadata == overwritten)
        #expect(try current()?.blobID == overwritten.generation)

        try await backend.delete(EmbeddedBackendTests.path("a"), preconditions: Preconditions())
        #expect(try current() == nil, "a delete is seen at once")
        #expect(readers.hits == 3)
    }
}
