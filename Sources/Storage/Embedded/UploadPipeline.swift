import Dispatch
import PortcullisCore

/// Writes a body's batches to a file and checksums them on a second thread, while the caller receives the
/// next batch: receiving, writing and hashing (MD5 is the slowest of the three) overlap instead of taking
/// turns.
///
/// `submit(k)` queues batch k on the file's write lane and on a hash lane (both serial, so bytes reach the
/// file and the checksum in order), then waits until batch k−1 is written and hashed. So each lane has its
/// next batch ready when it finishes one, and at most two batches are held here besides the one the caller is
/// receiving (memory ≤ 3 × `BodyPump.batchSize` per upload). A write failure is reported by the next `submit`
/// or by `finish`; the write lane drops every later batch.
///
/// Contract: one caller, each call awaited before the next (as `BodyPump` calls its sink). End with `finish`
/// and then `close`, or with `abandon`: both run on the write lane after every queued write, so no write
/// outlives the pipeline's file. Confinement (hence `@unchecked Sendable`): `pending` belongs to the caller,
/// `writeFailure` and `file` to the write lane, `checksum` to the hash lane; `Ticket`s carry results across
/// through `DispatchGroup`, which orders them.
final class UploadPipeline: @unchecked Sendable {
    private let file: FileAppender
    private let writeLane: DispatchQueue
    private let hashLane: DispatchQueue
    private var checksum: BodyChecksum?
    private var writeFailure: StorageError?
    private var pending: Ticket?

    /// `checksum`: the running checksum of exactly the bytes before `file.position`, continued by every
    /// batch; nil computes none.
    init(file: FileAppender, checksum: BodyChecksum?, writeLane: DispatchQueue, hashLane: DispatchQueue) {
        self.file = file
        self.checksum = checksum
        self.writeLane = writeLane
        self.hashLane = hashLane
    }

    /// Queues `batch` and waits for the batch before it (see the type's contract).
    func submit(_ batch: BodyBatch) async throws(StorageError) {
        guard !batch.isEmpty else { return }
        let previous = pending
        pending = enqueue(
            write: { (file) throws(StorageError) in try file.append(batch) },
            hash: { checksum in for piece in batch.pieces { checksum?.update(piece) } }, snapshot: false)
        if let previous { try await previous.result() }
    }

    /// Waits for every queued batch, then (if `sync`) fsyncs the file. Returns the file's size and the checksum
    /// of everything before it (nil when created without one).
    func finish(sync: Bool) async throws(StorageError) -> (size: Int64, checksum: BodyChecksum?) {
        let last = enqueue(
            write: { (file) throws(StorageError) in if sync { try file.sync() } }, hash: { _ in },
            snapshot: true)
        pending = nil
        try await last.result()
        return (last.size, last.checksum)
    }

    /// Closes the file on its lane, after everything queued.
    func close() async {
        let file = self.file
        _ = try? await BlockingPool.run(on: writeLane) { () throws(StorageError) in file.close() }
    }

    /// Gives up: waits for the queued writes, then runs `cleanup` (truncate, close, unlink) on the write lane.
    func abandon(_ cleanup: @escaping @Sendable (FileAppender) -> Void) async {
        let file = self.file
        pending = nil
        _ = try? await BlockingPool.run(on: writeLane) { () throws(StorageError) in cleanup(file) }
    }

    /// Queues one step on both lanes; the ticket completes when both ran. `snapshot` copies the checksum into
    /// the ticket (only at the end: a copy of a running MD5 makes its next update copy the OpenSSL context).
    private func enqueue(
        write: @escaping @Sendable (FileAppender) throws(StorageError) -> Void,
        hash: @escaping @Sendable (inout BodyChecksum?) -> Void, snapshot: Bool
    ) -> Ticket {
        let ticket = Ticket()
        ticket.group.enter()
        ticket.group.enter()
        writeLane.async { [self] in
            if writeFailure == nil {
                do throws(StorageError) {
                    try write(file)
                } catch {
                    writeFailure = error
                }
            }
            ticket.failure = writeFailure
            ticket.size = file.position
            ticket.group.leave()
        }
        hashLane.async { [self] in
            hash(&checksum)
            if snapshot { ticket.checksum = checksum }
            ticket.group.leave()
        }
        return ticket
    }

    /// The outcome of one queued step: filled by the two lanes (each its own fields), read by the caller
    /// only after `group` is done.
    private final class Ticket: @unchecked Sendable {
        let group = DispatchGroup()
        var failure: StorageError?
        var size: Int64 = 0
        var checksum: BodyChecksum?

        /// Waits (without blocking a thread) until both lanes ran this step; throws the write failure.
        func result() async throws(StorageError) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                group.notify(queue: .global(qos: .userInitiated)) { continuation.resume() }
            }
            if let failure { throw failure }
        }
    }
}
