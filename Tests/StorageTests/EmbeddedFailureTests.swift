import Foundation
import PortcullisCore
import Testing

@testable import Storage

/// How the embedded backend behaves when its medium fails it: a damaged index, a write lock another process
/// holds, an index or disk that is full; and the periodic sweep that runs while the store is open. Each
/// failure must be the error the gateway maps to the right status (503 and whether to retry, or 500), leave
/// nothing half-written behind, and let the next attempt succeed once the cause is gone.
@Suite struct EmbeddedFailureTests {
    static let bucket = "failure-bucket"

    static func path(_ name: String) throws -> ObjectPath { try ObjectPath(bucket: bucket, name: name) }

    static func open(_ directory: TemporaryDirectory, _ options: EmbeddedOptions = EmbeddedOptions()) throws
        -> EmbeddedBackend
    {
        try EmbeddedBackend.open(directory: directory.path, bucket: bucket, options: options)
    }

    static func put(
        _ backend: EmbeddedBackend, _ name: String, _ bytes: [UInt8],
        attributes: ObjectAttributes = ObjectAttributes()
    ) async throws(StorageError) -> ObjectMetadata {
        let object: ObjectPath
        do { object = try path(name) } catch { throw .invalidArgument("\(error)") }
        return try await backend.write(
            object, body: BufferByteStream(bytes), attributes: attributes,
            options: WriteOptions())
    }

    static func files(_ directory: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
    }

    static func layout(_ directory: TemporaryDirectory) -> DirectoryLayout {
        DirectoryLayout(root: FileSystem.canonicalPath(directory.path)!)
    }

    /// Polls `condition` (the sweep runs on its own timer) for up to `seconds`.
    static func eventually(_ seconds: Double = 15, _ condition: () async -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await condition() { return true }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        return await condition()
    }

    @Test func damagedIndexFailsStartUpAndReleasesTheDirectory() async throws {
        let directory = TemporaryDirectory()
        let layout = Self.layout(directory)
        #expect(FileManager.default.createFile(atPath: layout.index, contents: Data(repeating: 0x5A, count: 8192)))
        do {
            _ = try Self.open(directory)
            Issue.record("opened a directory whose index is not a database")
        } catch let error as StorageError {
            guard case .internalError(let message) = error else {
                Issue.record("expected internalError, got \(error)")
                return
            }
            #expect(message.contains("index.sqlite") && message.contains("not a database"), "\(message)")
        }
        // The failed open released the directory lock: a leaked lock would make the next open wait forever.
        let probe = try FileSystem.create(layout.lockFile, exclusive: false)
        let free = FileSystem.tryLock(probe, exclusive: true)
        FileSystem.close(probe)
        #expect(free, "the failed open still holds the directory lock")
        guard free else { return }
        try FileManager.default.removeItem(atPath: layout.index)
        let backend = try Self.open(directory)
        let stored = try await Self.put(backend, "after-repair", Array("ok".utf8))
        #expect(stored.size == 2)
    }

    @Test func aWriteLockHeldElsewhereIsUnavailableWithRetryAfterAndLeavesNothing() async throws {
        let directory = TemporaryDirectory()
        let layout = Self.layout(directory)
        let backend = try Self.open(directory, EmbeddedOptions(busyTimeoutMilliseconds: 50))
        _ = try await Self.put(backend, "before", Array("first".utf8))
        let blobsBefore = Self.files(layout.blobDirectory(bucket: Self.bucket))

        // Another process (here: another connection) holds the write lock past the busy timeout.
        let other = try SQLiteDatabase(path: layout.index, busyTimeoutMilliseconds: 0)
        try other.execute("BEGIN EXCLUSIVE")
        do {
            _ = try await Self.put(backend, "blocked", Array("second".utf8))
            Issue.record("a write succeeded while another connection held the write lock")
        } catch {
            guard case .unavailable(let reason, let retryAfter) = error else {
                Issue.record("expected unavailable, got \(error)")
                return
            }
            #expect(retryAfter == 1, "a busy database is worth retrying soon: \(reason)")
            #expect(reason.contains("busy"), "\(reason)")
        }
        // Reads still work under the foreign write lock (WAL), and the refused write left no trace.
        #expect(try await backend.metadata(of: Self.path("before")).size == 5)
        await #expect(throws: StorageError.self) { try await backend.metadata(of: Self.path("blocked")) }
        #expect(Self.files(layout.tmp).isEmpty)
        #expect(Self.files(layout.blobDirectory(bucket: Self.bucket)) == blobsBefore)

        try other.execute("ROLLBACK")
        #expect(try await Self.put(backend, "blocked", Array("second".utf8)).size == 6)
    }

    @Test func aFullIndexIsUnavailableWithoutRetryAfterAndLeavesNothing() async throws {
        let directory = TemporaryDirectory()
        let layout = Self.layout(directory)
        let backend = try Self.open(directory)
        _ = try await Self.put(backend, "seed", Array("seed".utf8))
        // SQLite reports SQLITE_FULL when the database may not grow: what a full disk looks like to it.
        try backend.store.writer.runSync { (db) throws(StorageError) in
            try db.execute("PRAGMA max_page_count = 1;")  // clamps to the current size
        }
        let padding = ObjectAttributes(customMetadata: ["pad": String(repeating: "x", count: 16 * 1024)])
        var failure: StorageError?
        for index in 0..<64 {
            do {
                _ = try await Self.put(backend, "object-\(index)", [UInt8(index)], attributes: padding)
            } catch {
                failure = error
                break
            }
        }
        guard case .unavailable(let reason, let retryAfter)? = failure else {
            Issue.record("expected unavailable once the index is full, got \(String(describing: failure))")
            return
        }
        #expect(retryAfter == nil, "a full disk is an operator problem, not a moment's wait: \(reason)")
        #expect(reason.contains("disk full"), "\(reason)")
        // Every object that was acknowledged has its blob; the refused one left neither blob nor temp file.
        let listed = try await backend.list(
            ListRequest(bucket: Self.bucket, prefix: "", delimiter: nil, maxResults: 1000, cursor: nil))
        #expect(Self.files(layout.blobDirectory(bucket: Self.bucket)).count == listed.items.count)
        #expect(Self.files(layout.tmp).isEmpty)
    }

    @Test(arguments: [(ENOSPC, true), (EDQUOT, true), (EACCES, false), (EIO, false), (EROFS, false)])
    func fileSystemErrorsAreClassified(_ code: Int32, _ unavailable: Bool) {
        switch FileSystem.failure("write", "/data/tmp/x", code: code) {
        case .unavailable(let reason, let retryAfter):
            #expect(unavailable, "\(reason)")
            #expect(retryAfter == nil)
            #expect(reason.hasPrefix("write /data/tmp/x: "))
        case .internalError(let message):
            #expect(!unavailable, "\(message)")
            #expect(message.hasPrefix("write /data/tmp/x: "))
        default:
            Issue.record("unexpected classification of errno \(code)")
        }
    }

    @Test func thePeriodicSweepRemovesOrphansAndExpiresIdleUploadsWhileOpen() async throws {
        let directory = TemporaryDirectory()
        let layout = Self.layout(directory)
        let backend = try Self.open(
            directory,
            EmbeddedOptions(stagingIdleExpirySeconds: 1, sweepIntervalSeconds: 1, orphanGracePeriodSeconds: 600))
        let object = try Self.path("idle")
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        // Left behind after start-up (start-up collection already ran): only the timer can remove it. It is older
        // than the grace period; this process's own in-flight temp files are younger, so the sweep keeps them.
        let orphan = layout.tmp + "/orphan"
        #expect(FileManager.default.createFile(atPath: orphan, contents: Data([1, 2, 3])))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: orphan)
        let kept = try await Self.put(backend, "kept", Array("kept".utf8))

        #expect(await Self.eventually { Self.files(layout.tmp).isEmpty }, "the sweep never removed the orphan")
        let expired = await Self.eventually {
            do {
                _ = try await backend.stagedSize(handle, object: object)
                return false
            } catch let error as StorageError {
                if case .notFound = error { return true }
                return false
            } catch {
                return false
            }
        }
        #expect(expired, "an upload idle past its expiry still answers")
        // Its bytes go at the first sweep after they are older than the grace period.
        for name in Self.files(layout.staging) {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: layout.staging + "/" + name)
        }
        #expect(await Self.eventually { Self.files(layout.staging).isEmpty }, "the expired upload's bytes remain")
        // Committed objects are untouched by the sweep.
        #expect(try await backend.metadata(of: Self.path("kept")).generation == kept.generation)
    }
}
