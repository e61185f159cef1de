import Dispatch
import PortcullisCore

/// Writes a body's batches to a file and checksums them on a second thread, while the caller receives the
/// next batch: receiving, writing and hashing (MD5 is the slowest of the three) overlap instead of taking
/// turns.
///
/// `submit(k)` queues batch k on the file's write lane (`pwrite`, then early writeback of those pages, so the
/// disk works while the next bytes arrive and the final sync waits only for the tail) and on the checksum's
/// hash lane (both serial, so bytes reach the file and the checksum in order), then waits until batch k−1 is
/// written and hashed. So each lane has its next batch ready when it finishes one, and at most two batches are
/// held here besides the one the caller is receiving (memory ≤ 3 × `BodyPump.batchSize` per upload). A write
/// failure is reported by the next `submit` or by `finish`; the write lane drops every later batch.
///
/// `finish` waits for the writes (and the sync) only: the last batches may still be hashing, and whoever needs
/// the checksum asks the `RunningChecksum` for it — at once for a simple upload, at finalize for a resumable
/// one, whose chunks are acknowledged as soon as their bytes are durable.
///
/// Contract: one caller, each call awaited before the next (as `BodyPump` calls its sink). End with `finish`
/// and then `close`, or with `abandon`: both run on the write lane after every queued write, so no write
/// outlives the pipeline's file. Confinement (hence `@unchecked Sendable`): `pendingWrite` belongs to the
/// caller, `writeFailure` and `file` to the write lane; `Completion`s order the hand-overs.
final class UploadPipeline: @unchecked Sendable {
    private let file: FileAppender
    private let writeLane: DispatchQueue
    /// The running checksum this pipeline continues (nil computes none).
    let checksum: RunningChecksum?
    private var writeFailure: StorageError?
    private var pendingWrite: WriteStep?

    /// `checksum`: the running checksum of exactly the bytes before `file.position`, continued by every batch.
    init(file: FileAppender, checksum: RunningChecksum?, writeLane: DispatchQueue) {
        self.file = file
        self.checksum = checksum
        self.writeLane = writeLane
    }

    /// Queues `batch` and waits for the batch before it (see the type's contract).
    func submit(_ batch: BodyBatch) async throws(StorageError) {
        guard !batch.isEmpty else { return }
        let previous = pendingWrite
        pendingWrite = enqueue { (file) throws(StorageError) in
            let start = file.position
            try file.append(batch)
            file.startWriteback(from: start)
        }
        checksum?.feed(batch)
        if let previous { try await wait(for: previous) }
        await checksum?.settle(keepingPending: 1)
    }

    /// Waits for every queued write, then (if `sync`) makes the file's data and size durable. Returns the
    /// file's size. Does not wait for the hash lane (see the type's comment).
    func finish(sync: Bool) async throws(StorageError) -> Int64 {
        let last = enqueue { (file) throws(StorageError) in if sync { try file.sync() } }
        pendingWrite = nil
        try await wait(for: last)
        return file.position
    }

    /// Closes the file on its lane, after everything queued.
    func close() async {
        let file = self.file
        _ = try? await BlockingPool.run(on: writeLane) { () throws(StorageError) in file.close() }
    }

    /// Gives up: waits for the queued writes, then runs `cleanup` (truncate, close, unlink) on the write lane.
    func abandon(_ cleanup: @escaping @Sendable (FileAppender) -> Void) async {
        let file = self.file
        pendingWrite = nil
        _ = try? await BlockingPool.run(on: writeLane) { () throws(StorageError) in cleanup(file) }
    }

    /// Queues one step on the write lane; it completes once it ran (or was skipped after a failure).
    private func enqueue(_ write: @escaping @Sendable (FileAppender) throws(StorageError) -> Void) -> WriteStep {
        let step = WriteStep()
        writeLane.async { [self] in
            if writeFailure == nil {
                do throws(StorageError) {
                    try write(file)
                } catch {
                    writeFailure = error
                }
            }
            step.failure = writeFailure
            step.done.complete()
        }
        return step
    }

    /// Waits for a queued step; throws the write failure it saw.
    private func wait(for step: WriteStep) async throws(StorageError) {
        await step.done.wait()
        if let failure = step.failure { throw failure }
    }

    /// One queued write step: `failure` is set by the write lane before `done` completes, read after.
    private final class WriteStep: @unchecked Sendable {
        let done = Completion()
        var failure: StorageError?
    }
}
