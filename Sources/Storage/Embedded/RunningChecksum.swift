import Dispatch
import Synchronization

/// The MD5/CRC32C of a body, computed on a hash lane behind its writes — and, for a resumable upload, across
/// its chunks: a chunk is acknowledged once its bytes are durable, while the lane may still be hashing them.
///
/// `feed` queues a batch and returns at once; `settle(keepingPending:)` waits until at most that many fed
/// batches are still unhashed (the caller's bound on the memory the lane holds); `value()` waits for every fed
/// batch and returns the checksum of exactly the `fed` bytes. Nothing here is persisted: a process that did not
/// receive every byte of an upload has no `RunningChecksum` for it and reads the staged file instead.
///
/// Confinement (hence `@unchecked Sendable`): `fed` and `outstanding` belong to one caller at a time — the body
/// being received, then the next chunk or the finalize of the same upload, which the staging file's `flock`
/// orders and `EmbeddedStore.stagedChecksums`' mutex hands over; `checksum` belongs to the lane.
final class RunningChecksum: @unchecked Sendable {
    private let lane: DispatchQueue
    private var checksum = BodyChecksum()
    /// Bytes queued so far; once `value()` returned, also the bytes hashed.
    private(set) var fed: Int64 = 0
    /// Completions of the batches not known to be hashed, oldest first.
    private var outstanding: [Completion] = []

    init(lane: DispatchQueue) { self.lane = lane }

    /// Queues `batch` behind every batch fed before it.
    func feed(_ batch: BodyBatch) {
        guard !batch.isEmpty else { return }
        let done = Completion()
        lane.async { [self] in
            for piece in batch.pieces { checksum.update(piece) }
            done.complete()
        }
        fed += Int64(batch.count)
        outstanding.append(done)
    }

    /// Waits until at most `pending` fed batches are still unhashed. The lane is serial: the newest batch that
    /// must be done implies every older one.
    func settle(keepingPending pending: Int) async {
        guard outstanding.count > pending else { return }
        let mustFinish = outstanding.count - pending
        await outstanding[mustFinish - 1].wait()
        outstanding.removeFirst(mustFinish)
    }

    /// The checksum of every fed byte, once the lane hashed them all (a copy: the OpenSSL context is copied
    /// once here, at the end, rather than on every update).
    func value() async -> BodyChecksum {
        let snapshot = Snapshot()
        lane.async { [self] in
            snapshot.checksum = checksum
            snapshot.done.complete()
        }
        await snapshot.done.wait()
        outstanding.removeAll()
        return snapshot.checksum
    }

    /// Carries the lane's copy of the checksum to the caller; written before `done` completes, read after.
    private final class Snapshot: @unchecked Sendable {
        let done = Completion()
        var checksum = BodyChecksum()
    }
}

/// A one-shot event a Dispatch lane completes and one task awaits: the lane's thread resumes the waiting task
/// itself (no `DispatchGroup.notify` block on another queue, which would cost one more thread hand-off).
final class Completion: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Void, Never>)
        case done
    }

    private let state = Mutex<State>(.pending)

    func complete() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .done }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiter?.resume()
    }

    /// Returns once `complete()` ran (at once if it already did). At most one waiter.
    func wait() async {
        if state.withLock({ if case .done = $0 { true } else { false } }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { state -> Bool in
                if case .done = state { return true }
                state = .waiting(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
    }
}
