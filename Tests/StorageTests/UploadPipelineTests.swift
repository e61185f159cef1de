import Dispatch
import Foundation
import PortcullisCore
import Synchronization
import Testing

@testable import Storage

/// The write/hash pipeline of the embedded backend on real files: bytes and checksums in order, the two
/// lanes independent of each other, at most two batches held, `finish` not waiting for the hash lane, a
/// running checksum continued across pipelines (resumable chunks), failures reported, cleanup after the writes.
@Suite struct UploadPipelineTests {
    static func openFile(_ directory: TemporaryDirectory, readOnly: Bool = false) throws -> FileAppender {
        let path = directory.path + "/body"
        let fd = try FileSystem.create(path, exclusive: true)
        guard readOnly else { return FileAppender(path: path, descriptor: fd, position: 0) }
        FileSystem.close(fd)
        return FileAppender(path: path, descriptor: open(path, O_RDONLY | O_CLOEXEC), position: 0)
    }

    /// The checksums of `body` fed in one piece (`BodyChecksumTests` pins those to outside references).
    static func oneShot(_ body: [UInt8]) -> ObjectChecksums {
        var checksum = BodyChecksum()
        checksum.update(body)
        return checksum.finish()
    }

    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1
    }

    /// Many uneven batches of several pieces: the file holds exactly the body and the checksum equals the one-shot
    /// digests.
    @Test func bytesAndChecksumsArriveInOrder() async throws {
        let directory = TemporaryDirectory()
        let file = try Self.openFile(directory)
        let body = testBytes(3 << 20 + 12_345, seed: 7)
        let running = RunningChecksum(lane: DispatchQueue(label: "h"))
        let pipeline = UploadPipeline(file: file, checksum: running, writeLane: DispatchQueue(label: "w"))
        var index = 0
        var piece = 1
        while index < body.count {
            let end = min(body.count, index + piece)
            // Each batch in two pieces, as the pump hands over what the stream delivered.
            let middle = index + (end - index) / 2
            var batch = BodyBatch(Array(body[index..<middle]))
            batch.append(Array(body[middle..<end]))
            try await pipeline.submit(batch)
            index = end
            piece = piece * 3 + 17
        }
        let size = try await pipeline.finish(sync: true)
        await pipeline.close()
        #expect(size == Int64(body.count))
        #expect(await running.value().finish() == Self.oneShot(body))
        #expect(running.fed == Int64(body.count))
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: file.path))) == body)
    }

    /// A running checksum is continued by a second pipeline (the next resumable chunk, into a file opened
    /// again) while its lane may still be hashing the first, and none is computed when asked for none.
    @Test func continuesARunningChecksumOrComputesNone() async throws {
        let directory = TemporaryDirectory()
        let body = testBytes(3 << 20 + 100_000, seed: 3)
        let split = 2 << 20 + 40_000
        let hashLane = DispatchQueue(label: "h")
        let running = RunningChecksum(lane: hashLane)
        let file = try Self.openFile(directory)
        hashLane.suspend()  // the first chunk is not hashed yet when the second one starts
        let first = UploadPipeline(file: file, checksum: running, writeLane: DispatchQueue(label: "w"))
        try await first.submit(BodyBatch(Array(body[..<split])))
        #expect(try await first.finish(sync: true) == Int64(split))
        await first.close()
        let again = FileAppender(
            path: file.path, descriptor: try FileSystem.create(file.path, exclusive: false), position: Int64(split))
        let second = UploadPipeline(file: again, checksum: running, writeLane: DispatchQueue(label: "w"))
        hashLane.resume()
        try await second.submit(BodyBatch(Array(body[split..<(split + 1000)])))
        try await second.submit(BodyBatch(Array(body[(split + 1000)...])))
        #expect(try await second.finish(sync: false) == Int64(body.count))
        await second.close()
        #expect(await running.value().finish() == Self.oneShot(body))
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: file.path))) == body)

        let other = try Self.openFile(TemporaryDirectory())
        let plain = UploadPipeline(file: other, checksum: nil, writeLane: DispatchQueue(label: "w"))
        try await plain.submit(BodyBatch(body))
        #expect(try await plain.finish(sync: false) == Int64(body.count))
        #expect(plain.checksum == nil)
    }

    /// `finish` (the acknowledgement of a resumable chunk) waits for the bytes to be durable, not for the hash
    /// lane: it returns while the lane is held, and the checksum is complete once the lane ran.
    @Test(.timeLimit(.minutes(2))) func finishDoesNotWaitForTheHash() async throws {
        let directory = TemporaryDirectory()
        let file = try Self.openFile(directory)
        let hashLane = DispatchQueue(label: "h")
        let running = RunningChecksum(lane: hashLane)
        let pipeline = UploadPipeline(file: file, checksum: running, writeLane: DispatchQueue(label: "w"))
        let body = testBytes(200_000, seed: 5)
        hashLane.suspend()
        try await pipeline.submit(BodyBatch(body))
        let finished = Atomic<Bool>(false)
        let finishing = Task {
            let size = try await pipeline.finish(sync: true)
            finished.store(true, ordering: .relaxed)
            return size
        }
        // Polled with a bound, so a `finish` that waits for the held lane fails here instead of hanging. The
        // bound is generous: a parallel `swift test` on two cores can leave this task unscheduled for ~30 s,
        // and a `finish` that waited for the lane would never return while it is held.
        let deadline = ContinuousClock.now + .seconds(60)
        while !finished.load(ordering: .relaxed) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        let returnedWhileHeld = finished.load(ordering: .relaxed)
        #expect(returnedWhileHeld)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: file.path))) == body)
        #expect(running.fed == Int64(body.count))
        hashLane.resume()
        #expect(try await finishing.value == Int64(body.count))
        #expect(await running.value().finish() == Self.oneShot(body))
    }

    /// Writes go ahead while the hash lane is held, and the caller is held after two batches: hashing runs
    /// beside the writes, and memory stays bounded when the hash falls behind.
    @Test(.timeLimit(.minutes(1))) func writesDoNotWaitForTheHashAndAtMostTwoBatchesAreHeld() async throws {
        let directory = TemporaryDirectory()
        let file = try Self.openFile(directory)
        let hashLane = DispatchQueue(label: "h")
        hashLane.suspend()
        let running = RunningChecksum(lane: hashLane)
        let pipeline = UploadPipeline(file: file, checksum: running, writeLane: DispatchQueue(label: "w"))
        let batch = testBytes(64 * 1024, seed: 9)
        let submitted = Atomic<Int>(0)
        let producer = Task {
            for _ in 0..<5 {
                submitted.add(1, ordering: .relaxed)
                try await pipeline.submit(BodyBatch(batch))
            }
            return try await pipeline.finish(sync: false)
        }
        // Both queued batches reach the file although not one byte has been hashed.
        while Self.size(of: file.path) < 2 * batch.count { await Task.yield() }
        try await Task.sleep(for: .milliseconds(50))
        let calls = submitted.load(ordering: .relaxed)
        #expect(calls == 2)
        #expect(Self.size(of: file.path) == 2 * batch.count)
        hashLane.resume()
        let size = try await producer.value
        #expect(size == Int64(5 * batch.count))
        #expect(
            await running.value().finish() == Self.oneShot(Array([[UInt8]](repeating: batch, count: 5).joined())))
    }

    /// A failed write surfaces at the next call, later batches are dropped, and `abandon` runs after them.
    @Test func aWriteFailureIsReportedAndAbandonRunsLast() async throws {
        let directory = TemporaryDirectory()
        let file = try Self.openFile(directory, readOnly: true)
        let pipeline = UploadPipeline(
            file: file, checksum: RunningChecksum(lane: DispatchQueue(label: "h")), writeLane: DispatchQueue(label: "w")
        )
        try await pipeline.submit(BodyBatch([1, 2, 3]))  // queued; its failure is not known yet
        await #expect(throws: StorageError.self) { try await pipeline.submit(BodyBatch([4, 5, 6])) }
        await #expect(throws: StorageError.self) { try await pipeline.finish(sync: true) }
        let cleaned = Atomic<Bool>(false)
        await pipeline.abandon { file in
            file.close()
            FileSystem.remove(file.path)
            cleaned.store(true, ordering: .relaxed)
        }
        let didClean = cleaned.load(ordering: .relaxed)
        #expect(didClean)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// `abandon` waits for writes still queued (a client gone mid-body while the disk is slow).
    @Test func abandonWaitsForQueuedWrites() async throws {
        let directory = TemporaryDirectory()
        let file = try Self.openFile(directory)
        let writeLane = DispatchQueue(label: "w")
        let pipeline = UploadPipeline(
            file: file, checksum: RunningChecksum(lane: DispatchQueue(label: "h")), writeLane: writeLane)
        writeLane.suspend()
        try await pipeline.submit(BodyBatch(testBytes(4096, seed: 1)))
        let written = Atomic<Int>(-1)
        let started = Atomic<Bool>(false)
        let abandoning = Task {
            started.store(true, ordering: .relaxed)
            await pipeline.abandon { file in
                written.store(Int(file.position), ordering: .relaxed)
                file.close()
            }
        }
        while !started.load(ordering: .relaxed) { await Task.yield() }
        try await Task.sleep(for: .milliseconds(20))  // let `abandon` queue its cleanup behind the held write
        writeLane.resume()
        await abandoning.value
        let position = written.load(ordering: .relaxed)
        #expect(position == 4096)
    }
}
