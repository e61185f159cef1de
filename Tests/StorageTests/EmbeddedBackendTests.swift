import Foundation
import PortcullisCore
import Testing

@testable import Storage

/// Embedded-only behaviour: crash leftovers, concurrency, persistence of staging state, limits.
@Suite struct EmbeddedBackendTests {
    static let bucket = "embedded-bucket"

    static func path(_ name: String) throws -> ObjectPath { try ObjectPath(bucket: bucket, name: name) }

    static func openBackend(
        _ directory: TemporaryDirectory,
        options: EmbeddedOptions = EmbeddedOptions()
    ) throws -> EmbeddedBackend {
        try EmbeddedBackend.open(directory: directory.path, bucket: bucket, options: options)
    }

    static func put(_ backend: EmbeddedBackend, _ name: String, _ bytes: [UInt8]) async throws -> ObjectMetadata {
        try await backend.write(
            path(name), body: BufferByteStream(bytes), attributes: ObjectAttributes(),
            options: WriteOptions())
    }

    static func files(in directory: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
    }

    /// Everything a crash can leave behind is removed by the next start-up, and nothing else is.
    @Test func startUpRemovesCrashLeftovers() async throws {
        let directory = TemporaryDirectory()
        let layout = DirectoryLayout(root: FileSystem.canonicalPath(directory.path)!)
        let blobDirectory = layout.blobDirectory(bucket: Self.bucket)
        var activeHandle = ""
        do {
            let backend = try Self.openBackend(directory)
            _ = try await Self.put(backend, "keep", Array("kept".utf8))
            activeHandle = try await backend.startUpload(
                Self.path("staged"), attributes: ObjectAttributes(), declaredSize: nil)
            _ = try await backend.appendChunk(
                activeHandle, object: Self.path("staged"), offset: 0,
                body: BufferByteStream(Array("abc".utf8)))
        }
        // Crash leftovers: a half-received temp file, a published blob whose commit never happened, a staging
        // file without a session, and a row written in a transaction that never committed.
        _ = FileManager.default.createFile(atPath: layout.tmp + "/0123", contents: Data([1, 2, 3]))
        _ = FileManager.default.createFile(atPath: blobDirectory + "/999", contents: Data([4]))
        _ = FileManager.default.createFile(
            atPath: layout.stagingFile("ffffffffffffffffffffffffffffffff"), contents: Data([5]))
        _ = FileManager.default.createFile(atPath: blobDirectory + "/1000", contents: Data([6]))
        do {
            let raw = try SQLiteDatabase(path: layout.index, busyTimeoutMilliseconds: 1000)
            try raw.execute("BEGIN IMMEDIATE")
            let metadata = ObjectMetadata(
                bucket: Self.bucket, name: "uncommitted", generation: 1000, size: 1,
                timeCreated: .now(), updated: .now())
            try ObjectIndex.upsert(raw, StoredObject(metadata: metadata, blobID: 1000))
            raw.releaseStatements()
            // Closing with the transaction open is what a crash does: SQLite rolls it back.
        }
        let blobsBefore = Self.files(in: blobDirectory)
        #expect(blobsBefore.count == 3)

        let reopened = try Self.openBackend(directory)
        #expect(Self.files(in: layout.tmp).isEmpty)
        #expect(Self.files(in: blobDirectory).count == 1, "only the committed object's blob remains")
        #expect(Self.files(in: layout.staging) == [activeHandle], "only the active session's bytes remain")
        #expect(try await readAll(reopened.read(Self.path("keep"), range: nil).body) == Array("kept".utf8))
        await #expect(throws: StorageError.self) { _ = try await reopened.metadata(of: Self.path("uncommitted")) }
        // The staging session survived the restart with its bytes.
        #expect(try await reopened.stagedSize(activeHandle, object: Self.path("staged")) == 3)
        let staged = try await reopened.finalizeUpload(
            activeHandle, object: Self.path("staged"),
            attributes: ObjectAttributes(), options: WriteOptions())
        #expect(staged.size == 3)
        #expect(Self.files(in: layout.staging).isEmpty)
    }

    /// While another process has the directory open, only orphans older than the grace period are removed:
    /// fresh ones may be that process's writes in flight.
    @Test func sharedDirectoryKeepsFreshFiles() async throws {
        let directory = TemporaryDirectory()
        let layout = DirectoryLayout(root: FileSystem.canonicalPath(directory.path)!)
        do { _ = try Self.openBackend(directory) }
        _ = FileManager.default.createFile(atPath: layout.tmp + "/fresh", contents: Data([1]))
        _ = FileManager.default.createFile(atPath: layout.tmp + "/old", contents: Data([1]))
        let old = Date(timeIntervalSinceNow: -7200)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: layout.tmp + "/old")
        // Stand-in for another process: a shared lock on the directory's lock file.
        let other = Glibc.open(layout.lockFile, O_RDWR)
        #expect(flock(other, LOCK_SH) == 0)
        defer { close(other) }
        _ = try Self.openBackend(directory)
        #expect(Self.files(in: layout.tmp) == ["fresh"])
    }

    /// 20 writers race on one name: the survivor is exactly one of the writes, with matching checksums, the
    /// highest generation handed out, and no other blob left on disk.
    @Test func concurrentWritersToOneName() async throws {
        let directory = TemporaryDirectory()
        let backend = try Self.openBackend(directory)
        let bodies = (0..<20).map { testBytes(150_000 + $0 * 1000, seed: UInt64($0 + 1)) }
        let results = try await withThrowingTaskGroup(of: ObjectMetadata.self) { group in
            for body in bodies { group.addTask { try await Self.put(backend, "contended", body) } }
            var all = [ObjectMetadata]()
            for try await result in group { all.append(result) }
            return all
        }
        #expect(Set(results.map(\.generation)).count == 20, "every write got its own generation")
        let read = try await backend.read(Self.path("contended"), range: nil)
        let content = try await readAll(read.body)
        let winner = try #require(results.max { $0.generation < $1.generation })
        #expect(read.metadata == winner, "the last commit (highest generation) wins")
        #expect(md5Base64(content) == winner.md5Hash)
        #expect(bodies.contains(content))
        #expect(Int64(content.count) == winner.size)
        let blobDirectory = backend.store.layout.blobDirectory(bucket: Self.bucket)
        #expect(Self.files(in: blobDirectory).count == 1, "replaced generations' blobs are unlinked")
        #expect(Self.files(in: backend.store.layout.tmp).isEmpty)
    }

    /// Generations stay strictly increasing across restarts (the counter is in the index).
    @Test func generationsIncreaseAcrossRestarts() async throws {
        let directory = TemporaryDirectory()
        var last: Int64 = 0
        for round in 0..<3 {
            let backend = try Self.openBackend(directory)
            let metadata = try await Self.put(backend, "g", [UInt8(round)])
            #expect(metadata.generation > last)
            last = metadata.generation
        }
    }

    /// Staged bytes are bounded per directory; a refused chunk stores nothing.
    @Test func stagingCeiling() async throws {
        let directory = TemporaryDirectory()
        let backend = try Self.openBackend(directory, options: EmbeddedOptions(maxStagedBytes: 3 << 20))
        let a = try await backend.startUpload(Self.path("a"), attributes: ObjectAttributes(), declaredSize: nil)
        let b = try await backend.startUpload(Self.path("b"), attributes: ObjectAttributes(), declaredSize: nil)
        _ = try await backend.appendChunk(
            a, object: Self.path("a"), offset: 0, body: BufferByteStream(testBytes(2 << 20, seed: 1)))
        do {
            _ = try await backend.appendChunk(
                b, object: Self.path("b"), offset: 0,
                body: BufferByteStream(testBytes(2 << 20, seed: 2)))
            Issue.record("a chunk past the staging ceiling must be refused")
        } catch {
            guard case .unavailable? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        #expect(try await backend.stagedSize(b, object: Self.path("b")) == 0)
        #expect(backend.store.stagingInFlight.load(ordering: .relaxed) == 0)
        // Finishing the first upload frees its share.
        _ = try await backend.finalizeUpload(
            a, object: Self.path("a"), attributes: ObjectAttributes(), options: WriteOptions())
        #expect(
            try await backend.appendChunk(
                b, object: Self.path("b"), offset: 0,
                body: BufferByteStream(testBytes(2 << 20, seed: 2))) == 2 << 20)
    }

    /// Idle sessions expire: their handle becomes unknown and their bytes are removed.
    @Test func idleUploadsExpire() async throws {
        let directory = TemporaryDirectory()
        var handle = ""
        do {
            let backend = try Self.openBackend(directory)
            handle = try await backend.startUpload(Self.path("idle"), attributes: ObjectAttributes(), declaredSize: nil)
            _ = try await backend.appendChunk(
                handle, object: Self.path("idle"), offset: 0, body: BufferByteStream([1, 2]))
        }
        try await Task.sleep(for: .milliseconds(20))
        let backend = try Self.openBackend(directory, options: EmbeddedOptions(stagingIdleExpirySeconds: 0))
        do {
            _ = try await backend.stagedSize(handle, object: Self.path("idle"))
            Issue.record("an expired upload must be unknown")
        } catch {
            #expect(error.isNotFound)
        }
        #expect(Self.files(in: backend.store.layout.staging).isEmpty)
    }

    /// A read is a file region of exactly the requested bytes; nothing is loaded into memory.
    @Test func readsAreFileRegions() async throws {
        let directory = TemporaryDirectory()
        let backend = try Self.openBackend(directory)
        let body = testBytes(3 << 20, seed: 5)
        _ = try await Self.put(backend, "region", body)
        let read = try await backend.read(Self.path("region"), range: .fromTo(first: 1 << 20, last: (2 << 20) - 1))
        guard case .file(let region) = read.body else { Issue.record("expected a file region"); return }
        #expect(region.offset == 1 << 20)
        #expect(region.length == 1 << 20)
        #expect(try await readAll(read.body) == Array(body[(1 << 20)..<(2 << 20)]))
    }

    /// Object names never become paths: a `../` name writes nothing outside the directory.
    @Test func namesNeverTouchTheFileSystem() async throws {
        let parent = TemporaryDirectory()
        let directory = parent.path + "/store"
        let backend = try EmbeddedBackend.open(directory: directory, bucket: Self.bucket)
        _ = try await Self.put(backend, "../escape", [1])
        _ = try await Self.put(backend, "../../escape2", [2])
        #expect(Self.files(in: parent.path) == ["store"])
        #expect(
            Self.files(in: directory) == [
                "index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "lock", "tmp", "blobs", "staging",
            ])
    }

    /// Bytes a crashed append wrote past the recorded size are never part of the object: the next append
    /// overwrites them, and finalize publishes exactly the recorded size.
    @Test func bytesOfACrashedAppendAreDiscarded() async throws {
        let directory = TemporaryDirectory()
        let backend = try Self.openBackend(directory, options: EmbeddedOptions())
        let object = try Self.path("nested/dir/upload")
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        _ = try await backend.appendChunk(
            handle, object: object, offset: 0, body: BufferByteStream(testBytes(100, seed: 1)))
        let stagingFile = backend.store.layout.stagingFile(handle)
        let junk = try #require(FileHandle(forWritingAtPath: stagingFile))
        try junk.seekToEnd()
        try junk.write(contentsOf: Data(repeating: 0xEE, count: 5000))
        try junk.close()
        #expect(try await backend.stagedSize(handle, object: object) == 100)
        _ = try await backend.appendChunk(
            handle, object: object, offset: 100, body: BufferByteStream(testBytes(10, seed: 2)))
        let again = try #require(FileHandle(forWritingAtPath: stagingFile))
        try again.seekToEnd()
        try again.write(contentsOf: Data(repeating: 0xEE, count: 7000))
        try again.close()
        let metadata = try await backend.finalizeUpload(
            handle, object: object, attributes: ObjectAttributes(),
            options: WriteOptions())
        let expected = testBytes(100, seed: 1) + testBytes(10, seed: 2)
        #expect(metadata.size == 110)
        #expect(metadata.md5Hash == md5Base64(expected))
        #expect(try await readAll(backend.read(object, range: nil).body) == expected)
        let blob = backend.store.layout.blobFile(bucket: Self.bucket, blobID: metadata.generation)
        let attributes = try FileManager.default.attributesOfItem(atPath: blob)
        #expect((attributes[.size] as? NSNumber)?.intValue == 110)
    }

    /// The checksums finalize reports for `bytes` (MD5, CRC32C), as the metadata carries them.
    static func checksums(_ bytes: [UInt8]) -> (md5: String, crc32c: String) {
        var checksum = BodyChecksum()
        checksum.update(bytes)
        let done = checksum.finish()
        return (done.md5Base64, done.crc32cBase64)
    }

    /// Finalizes `handle` on `backend` and expects the object's MD5 and CRC32C to be those of `bytes`.
    static func expectFinalized(
        _ backend: EmbeddedBackend, _ handle: String, _ object: ObjectPath, as bytes: [UInt8]
    ) async throws {
        let metadata = try await backend.finalizeUpload(
            handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
        let expected = checksums(bytes)
        #expect(metadata.md5Hash == expected.md5)
        #expect(metadata.crc32c == expected.crc32c)
    }

    /// A resumable upload continued by a second instance after an acknowledged chunk (this process's running
    /// checksum is gone with the first; acknowledgements never waited for it) finalizes with the checksums of
    /// exactly the staged bytes, read back from the staging file.
    @Test func aSecondInstanceResumesAndFinalizesWithTheRightChecksums() async throws {
        let directory = TemporaryDirectory()
        let object = try Self.path("resumed/elsewhere")
        let first = testBytes(3 << 20 + 5, seed: 11), second = testBytes(2 << 20, seed: 12)
        var backend: EmbeddedBackend? = try Self.openBackend(directory, options: EmbeddedOptions())
        weak var firstStore = backend?.store
        let handle = try await #require(backend).startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        _ = try await #require(backend).appendChunk(handle, object: object, offset: 0, body: BufferByteStream(first))
        backend = nil
        #expect(firstStore == nil)  // a new store: no running checksum carries over
        let other = try Self.openBackend(directory, options: EmbeddedOptions())
        #expect(try await other.stagedSize(handle, object: object) == Int64(first.count))
        _ = try await other.appendChunk(
            handle, object: object, offset: Int64(first.count), body: BufferByteStream(second))
        try await Self.expectFinalized(other, handle, object, as: first + second)
        #expect(try await readAll(other.read(object, range: nil).body) == first + second)
    }

    /// Chunks appended by one instance finalize with the running checksum (computed behind the
    /// acknowledgements), also when a chunk failed midway after a whole batch had reached the hash lane and
    /// was then sent again.
    @Test func aFailedChunkDoesNotLeakIntoTheRunningChecksum() async throws {
        let directory = TemporaryDirectory()
        let backend = try Self.openBackend(directory, options: EmbeddedOptions())
        let object = try Self.path("resumed/failed")
        let first = testBytes(2 << 20 + 17, seed: 21), second = testBytes(1 << 20 + 300_000, seed: 22)
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        _ = try await backend.appendChunk(handle, object: object, offset: 0, body: BufferByteStream(first))
        await #expect(throws: StorageError.self) {
            try await backend.appendChunk(
                handle, object: object, offset: Int64(first.count),
                body: FailingByteStream(prefix: testBytes(1_500_000, seed: 99)))
        }
        #expect(try await backend.stagedSize(handle, object: object) == Int64(first.count))
        _ = try await backend.appendChunk(
            handle, object: object, offset: Int64(first.count), body: BufferByteStream(second))
        try await Self.expectFinalized(backend, handle, object, as: first + second)
    }

    /// A directory that does not exist yet is created with its parents.
    @Test func opensANestedNewDirectory() async throws {
        let parent = TemporaryDirectory()
        let backend = try EmbeddedBackend.open(directory: parent.path + "/a/b/c", bucket: Self.bucket)
        _ = try await Self.put(backend, "x", [1])
        #expect(backend.directory.hasSuffix("/a/b/c"))
    }

    /// Bucket names are identities by bytes: a canonically equivalent spelling is another (unserved) bucket.
    @Test func bucketNamesAreMatchedByBytes() async throws {
        let directory = TemporaryDirectory()
        let backend = try EmbeddedBackend.open(directory: directory.path, bucket: "bucket-K")
        _ = try await backend.write(
            ObjectPath(bucket: "bucket-K", name: "x"), body: BufferByteStream([1]),
            attributes: ObjectAttributes(), options: WriteOptions())
        let twin = "bucket-\u{212A}"
        await #expect(throws: StorageError.self) { try await backend.metadata(of: ObjectPath(bucket: twin, name: "x")) }
        await #expect(throws: StorageError.self) {
            try await backend.list(ListRequest(bucket: twin, prefix: "", delimiter: nil, maxResults: 10, cursor: nil))
        }
        await #expect(throws: StorageError.self) {
            try await backend.delete(ObjectPath(bucket: twin, name: "x"), preconditions: .none)
        }
        #expect(try await readAll(backend.read(ObjectPath(bucket: "bucket-K", name: "x"), range: nil).body) == [1])
    }

    /// Two directories whose names are canonically equivalent are two directories to the file system, so two
    /// stores: the process-wide store registry must not hand one out for the other.
    @Test func equivalentDirectoryNamesAreDifferentStores() async throws {
        let parent = TemporaryDirectory()
        let composed = try EmbeddedBackend.open(directory: parent.path + "/caf\u{E9}", bucket: Self.bucket)
        let decomposed = try EmbeddedBackend.open(directory: parent.path + "/cafe\u{301}", bucket: Self.bucket)
        #expect(!composed.directory.bytesEqual(decomposed.directory))
        _ = try await Self.put(composed, "only-here", [1])
        await #expect(throws: StorageError.self) { try await decomposed.metadata(of: Self.path("only-here")) }
    }

    /// Dot segments inside a name are ordinary characters; the whole names `.` and `..` are refused by the
    /// object-name policy before any backend sees them (GCS refuses them, and one policy holds everywhere).
    @Test func dotSegmentsAreOrdinaryCharacters() async throws {
        let directory = TemporaryDirectory()
        let backend = try Self.openBackend(directory)
        for (index, name) in ["./..", "../..", ".../x"].enumerated() {
            _ = try await Self.put(backend, name, [UInt8(index)])
        }
        for (index, name) in ["./..", "../..", ".../x"].enumerated() {
            #expect(try await readAll(backend.read(Self.path(name), range: nil).body) == [UInt8(index)])
        }
        let page = try await backend.list(
            ListRequest(bucket: Self.bucket, prefix: "", delimiter: "/", maxResults: 10, cursor: nil))
        #expect(page.prefixes == [".../", "../", "./"])
        #expect(throws: ObjectPathError.dotSegmentName) { try Self.path(".") }
        #expect(throws: ObjectPathError.dotSegmentName) { try Self.path("..") }
    }
}

/// Point lookups in place on an HTTP event loop (`InPlaceLookup`, `InlineReaders`).
@Suite struct EmbeddedInlineReadTests {
    typealias Base = EmbeddedBackendTests

    /// Starts `operation` as an immediate task on a loop-like serial queue, handing it that queue's permit (as
    /// an event loop's request carries it), and reports whether it finished without a thread hop, plus its
    /// result.
    static func runMarked<T: Sendable>(
        _ operation: @escaping @Sendable (any InPlaceLookupPermit) async throws -> T
    ) async throws -> (inline: Bool, value: T) {
        // Whether the code after the await still runs where the permit applies: a read done in place never
        // suspended; one that took a lane resumes on the cooperative pool, which the permit does not cover.
        // (Checking whether the result had arrived when `Task.immediate` returned would race a fast lane.)
        let box = ResultBox<T>()
        let inPlace = ResultBox<Bool>()
        let loop = QueuePermit()
        let task = loop.queue.sync {
            Task.immediate {
                let result = await Result { try await operation(loop) }
                inPlace.set(.success(loop.coversCurrentThread))
                box.set(result)
            }
        }
        await task.value
        return (try inPlace.get()!.get(), try box.get()!.get())
    }

    /// Metadata and whole-object reads complete without suspending when marked, and return what a lane read
    /// returns; a missing object is `.notFound` either way.
    @Test func markedReadsCompleteInPlace() async throws {
        let directory = TemporaryDirectory()
        let backend = try Base.openBackend(directory)
        let written = try await Base.put(backend, "a", Array("inline".utf8))
        let object = try Base.path("a")

        let marked = try await Self.runMarked { try await backend.metadata(of: object, inPlace: $0) }
        #expect(marked.inline)
        #expect(marked.value == written)
        #expect(try await backend.metadata(of: object) == written)

        let read = try await Self.runMarked { try await backend.read(object, range: nil, inPlace: $0) }
        #expect(read.inline)
        #expect(try await readAll(read.value.body) == Array("inline".utf8))

        let missing = try Base.path("missing")
        do {
            _ = try await Self.runMarked { try await backend.metadata(of: missing, inPlace: $0) }
            Issue.record("a missing object was found")
        } catch StorageError.notFound {
        }
        // An overwrite is seen by the next in-place read (no stale snapshot is kept between lookups).
        let rewritten = try await Base.put(backend, "a", Array("again".utf8))
        #expect(try await Self.runMarked { try await backend.metadata(of: object, inPlace: $0) }.value == rewritten)
    }

    /// With no inline connections configured, even a marked read takes a reader lane: no lookup is tried in
    /// place. (Whether the task is back on the loop's queue afterwards proves nothing: a lane that answers before
    /// the task reaches its `await` lets it continue where it was.)
    @Test func disabledInlineReadsUseALane() async throws {
        let directory = TemporaryDirectory()
        let backend = try Base.openBackend(directory, options: EmbeddedOptions(inlineReaderConnections: 0))
        let written = try await Base.put(backend, "a", [1, 2, 3])
        let object = try Base.path("a")
        let marked = try await Self.runMarked { try await backend.metadata(of: object, inPlace: $0) }
        #expect(marked.value == written)
        #expect(backend.store.inlineReaders.attempts == 0)
    }

    /// A small object read in place is served from the bytes its inline reader keeps with the row — whole,
    /// ranged, or refused as unsatisfiable exactly as from the file — and an overwrite is read at once; a
    /// larger object, or a store that keeps no bytes, is served from its file.
    @Test func smallObjectsReadInPlaceComeFromMemoryAndFollowOverwrites() async throws {
        let directory = TemporaryDirectory()
        // One inline connection, so the second read is the one its cache answers.
        let backend = try Base.openBackend(directory, options: EmbeddedOptions(inlineReaderConnections: 1))
        let object = try Base.path("small")
        _ = try await Base.put(backend, "small", Array("first bytes".utf8))
        func readMarked(_ range: ByteRangeSpec? = nil) async throws -> ObjectRead {
            let marked = try await Self.runMarked { try await backend.read(object, range: range, inPlace: $0) }
            #expect(marked.inline)
            return marked.value
        }
        func isMemory(_ read: ObjectRead) -> Bool { if case .bytes = read.body { true } else { false } }

        let whole = try await readMarked()
        #expect(isMemory(whole))
        #expect(try await readAll(whole.body) == Array("first bytes".utf8))
        let hits = backend.store.inlineReaders.hits
        let again = try await readMarked()
        #expect(try await readAll(again.body) == Array("first bytes".utf8))
        #expect(backend.store.inlineReaders.hits == hits + 1)

        let middle = try await readMarked(.fromTo(first: 1, last: 3))
        #expect(isMemory(middle))
        #expect(middle.range == ResolvedRange(offset: 1, length: 3))
        #expect(try await readAll(middle.body) == Array("irs".utf8))
        let tail = try await readMarked(.suffix(count: 5))
        #expect(try await readAll(tail.body) == Array("bytes".utf8))
        let open = try await readMarked(.fromTo(first: 6, last: nil))
        #expect(try await readAll(open.body) == Array("bytes".utf8))
        do {
            _ = try await readMarked(.fromTo(first: 11, last: nil))
            Issue.record("a range past the end was served")
        } catch StorageError.rangeNotSatisfiable(let size) {
            #expect(size == 11)
        }

        _ = try await Base.put(backend, "small", Array("second".utf8))
        let overwritten = try await readMarked()
        #expect(try await readAll(overwritten.body) == Array("second".utf8))

        _ = try await Base.put(backend, "empty", [])
        let empty = try await Self.runMarked {
            try await backend.read(try Base.path("empty"), range: .fromTo(first: 0, last: nil), inPlace: $0)
        }
        #expect(try await readAll(empty.value.body) == [])
        #expect(empty.value.range == nil)

        let large = [UInt8](repeating: 9, count: IndexRowCache.largestContent + 1)
        _ = try await Base.put(backend, "large", large)
        let largeRead = try await Self.runMarked {
            try await backend.read(try Base.path("large"), range: nil, inPlace: $0)
        }
        #expect(!isMemory(largeRead.value))
        #expect(try await readAll(largeRead.value.body) == large)

        let plainDirectory = TemporaryDirectory()
        let plain = try Base.openBackend(plainDirectory, options: EmbeddedOptions(cachedContentBytesPerInlineReader: 0))
        _ = try await Base.put(plain, "small", Array("x".utf8))
        let plainRead = try await Self.runMarked {
            try await plain.read(try Base.path("small"), range: nil, inPlace: $0)
        }
        #expect(!isMemory(plainRead.value))
        #expect(try await readAll(plainRead.value.body) == Array("x".utf8))
    }

    /// A connection in use is never waited for (a nested use finds the only slot taken and declines), and a
    /// busy database (`.unavailable`) declines too, so the caller takes a lane; other errors are answers.
    @Test func inlineReadersDeclineInsteadOfWaiting() throws {
        let directory = TemporaryDirectory()
        let backend = try Base.openBackend(directory)
        let readers = try InlineReaders(path: backend.store.layout.index, count: 1)
        let nested = readers.run { (_, _) throws(StorageError) -> Bool in
            readers.run { (_, _) throws(StorageError) -> Int in 1 } == nil
        }
        #expect(try nested?.get() == true)
        let busy = readers.run { (_, _) throws(StorageError) -> Int in
            throw .unavailable(reason: "database busy", retryAfter: 1)
        }
        #expect(busy == nil)
        let missing = readers.run { (_, _) throws(StorageError) -> Int in throw .notFound }
        guard case .failure(.notFound)? = missing else {
            Issue.record("expected .notFound, got \(String(describing: missing))")
            return
        }
        let value = readers.run { (db, _) throws(StorageError) -> Int64 in
            let statement = try db.statement("SELECT 42")
            _ = try statement.step()
            return statement.int64(0)
        }
        #expect(try value?.get() == 42)
        #expect(!readers.isUsable(under: nil), "without a permit nothing reads in place")
        let loop = QueuePermit()
        #expect(loop.queue.sync { readers.isUsable(under: loop) })
        #expect(!readers.isUsable(under: loop), "the permit covers only its loop's queue")
    }
}

/// A permit covering the blocks running on its serial queue, as the Dispatch event loop's does.
final class QueuePermit: InPlaceLookupPermit {
    let queue = DispatchQueue(label: "test.loop")
    private static let key = DispatchSpecificKey<ObjectIdentifier>()
    private let mark = Mark()
    private final class Mark: Sendable {}

    init() { queue.setSpecific(key: Self.key, value: ObjectIdentifier(mark)) }

    var coversCurrentThread: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(mark) }
}

/// A result set once from a task and read from the test's thread.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { lock.withLock { value = result } }
    func get() -> Result<T, any Error>? { lock.withLock { value } }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
