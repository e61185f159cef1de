import PortcullisCore
import Synchronization

/// The consumer side of a transfer's response body: a bounded buffer between curl's write callback (producer,
/// on the loop thread) and one async consumer.
///
/// Backpressure: once less than one curl write (`maxWrite`, curl's `CURLOPT_BUFFERSIZE`) of room is left,
/// `offer` asks the transfer to pause receiving right away (`.acceptedPause`), so curl never has to keep a refused
/// write (it would copy it into a buffer of its own); a write that still does not fit is refused with `.pause`
/// (`CURL_WRITEFUNC_PAUSE`). When the consumer has drained the buffer to half, it asks the transfer to un-pause.
/// So at most `capacity` bytes are buffered per transfer.
///
/// Window: the pause point is `window`, not `capacity`. It starts at `minimumWindow` and doubles (up to the
/// capacity, and only while the client-wide `WindowBudget` has bytes for it) when the consumer ran dry after a
/// pause — the buffer was too small to hide the un-pause latency. It halves (down to `minimumWindow`) after a
/// pause longer than `slowPauseNanoseconds` — the consumer is slow (a client on a slow link: the usual case with
/// many concurrent downloads), and a slow consumer gains nothing from a deep buffer but holds its memory.
///
/// Throughput: every hand-off to a waiting consumer resumes its task (on its connection's loop: the same thread
/// when the transfer runs there, a thread wake-up when it does not), so bytes are handed over in batches:
/// - curl's writes are appended to fixed-size chunks (`chunkBytes`, the consumer's `maxLength`), so the consumer
///   gets whole arrays without a re-copy and the allocator sees one size class;
/// - a waiting consumer is woken at once only when half the window is ready,
///   the transfer must pause, or the stream ended; fewer bytes reach it through the loop's flush timer
///   (`flush(olderThan:)`), so a slow upstream's trickle is delayed by at most that timer's period.
final class ResponseBodyStream: ByteStream {
    enum Offer {
        case accepted
        /// Accepted, and the next write might not fit: the transfer must pause receiving now (from inside the
        /// write callback, with `curl_easy_pause`), so curl never has to hold a refused write for us.
        case acceptedPause
        /// Refused because it does not fit: return `CURL_WRITEFUNC_PAUSE` (curl keeps this write meanwhile).
        case pause
        case refused
    }

    private struct State {
        /// FIFO of chunks; the last one may still be filling (capacity reserved up front).
        var chunks: [[UInt8]] = []
        var headIndex = 0
        var headOffset = 0
        var buffered = 0
        var received: Int64 = 0
        var end: Result<Void, any Error>?
        var waiter: CheckedContinuation<Result<[UInt8]?, any Error>, Never>?
        var waiterMaxLength = 0
        /// Monotonic time the first byte for the waiting consumer arrived without waking it (0: none pending).
        var pendingSince: UInt64 = 0
        var receivePaused = false
        var cancelled = false
        var expectedLength: Int64?
        /// Size of the chunks bytes are gathered into: the consumer's last `maxLength`, clamped.
        var chunkBytes: Int
        /// Current pause point (see the type's doc); `window / 2` is the low-water mark and the resume point.
        var window: Int
        /// Receiving was paused since the consumer last had to wait.
        var pausedSinceWait = false
        /// Monotonic time receiving was paused (valid while `receivePaused`).
        var pausedAt: UInt64 = 0
    }

    private let state: Mutex<State>
    private let capacity: Int
    /// The largest single curl write (`CURLOPT_BUFFERSIZE`): receiving pauses once less room than this is left.
    private let maxWrite: Int
    /// Bytes that wake a waiting consumer at the end of a loop round (below it, the flush timer does).
    /// Asks the transfer to re-evaluate its pause state (un-pause receiving) on the loop thread.
    private let resume: @Sendable () -> Void
    /// Aborts the transfer (consumer cancelled).
    private let abort: @Sendable () -> Void

    static let defaultChunkBytes = 64 * 1024
    /// A pause longer than this marks a slow consumer (the window shrinks).
    static let slowPauseNanoseconds: UInt64 = 100_000_000
    /// The smallest window: an eighth of the capacity, at least one curl write.
    private let minimumWindow: Int
    /// Where window growth beyond `minimumWindow` is taken from (and returned to).
    private let budget: WindowBudget

    /// Bytes of a bulk transfer's reservation (`ReceiveSizing`) and where they go back when the stream goes.
    private let reservation: (budget: WindowBudget, bytes: Int)?

    init(
        capacity: Int, maxWrite: Int, budget: WindowBudget, reservation: (budget: WindowBudget, bytes: Int)? = nil,
        resume: @escaping @Sendable () -> Void, abort: @escaping @Sendable () -> Void
    ) {
        let sizes = Self.sizes(capacity: capacity, maxWrite: maxWrite)
        self.capacity = sizes.capacity
        self.maxWrite = sizes.maxWrite
        self.minimumWindow = sizes.minimumWindow
        self.resume = resume
        self.abort = abort
        self.budget = budget
        self.reservation = reservation
        state = Mutex(State(chunkBytes: min(Self.defaultChunkBytes, sizes.capacity / 2), window: sizes.minimumWindow))
    }

    deinit {
        budget.release(state.withLock { $0.window } - minimumWindow)
        if let reservation { reservation.budget.release(reservation.bytes) }
    }

    /// The window floor of a stream made with `capacity` and `maxWrite` (what `ReceiveSizing` budgets for).
    static func minimumWindow(capacity: Int, maxWrite: Int) -> Int {
        sizes(capacity: capacity, maxWrite: maxWrite).minimumWindow
    }

    /// A stream's sizes from what it is asked for: the capacity at least 16 KiB, the largest write at most half of
    /// it, and the window floor an eighth of the capacity, at least one write, at most half the capacity.
    private static func sizes(capacity: Int, maxWrite: Int) -> (capacity: Int, maxWrite: Int, minimumWindow: Int) {
        let capacity = max(16 * 1024, capacity)
        let maxWrite = min(max(1, maxWrite), capacity / 2)
        return (capacity, maxWrite, min(capacity / 2, max(capacity / 8, maxWrite)))
    }

    var expectedLength: Int64? { state.withLock { $0.expectedLength } }

    var isReceivePaused: Bool { state.withLock { $0.receivePaused } }

    var bufferedBytes: Int { state.withLock { $0.buffered } }

    /// The most bytes the stream may hold (tests check a transfer's sizing).
    var bufferCapacity: Int { capacity }

    // MARK: producer (loop thread)

    func setExpectedLength(_ length: Int64?) { state.withLock { $0.expectedLength = length } }

    /// Takes one curl write. `needsFlush` true: a consumer now waits for bytes it was not woken for; the loop
    /// must call `flush` within its flush delay (reported once per such wait).
    func offer(_ bytes: UnsafeRawBufferPointer) -> (offer: Offer, needsFlush: Bool) {
        let (result, waiter, ready, needsFlush) = state.withLock {
            s -> (Offer, CheckedContinuation<Result<[UInt8]?, any Error>, Never>?, Result<[UInt8]?, any Error>?, Bool)
            in
            if s.cancelled || s.end != nil { return (.refused, nil, nil, false) }
            if s.buffered > 0 && s.buffered + bytes.count > capacity {
                s.receivePaused = true
                s.pausedSinceWait = true
                s.pausedAt = MonotonicClock.nanoseconds()
                // The consumer must drain what is here before curl may deliver more.
                if let waiter = s.waiter {
                    s.waiter = nil
                    s.pendingSince = 0
                    return (.pause, waiter, take(&s, maxLength: s.waiterMaxLength), false)
                }
                return (.pause, nil, nil, false)
            }
            append(&s, bytes)
            let offer: Offer
            if s.window - s.buffered < maxWrite {
                s.receivePaused = true
                s.pausedSinceWait = true
                s.pausedAt = MonotonicClock.nanoseconds()
                offer = .acceptedPause
            } else {
                offer = .accepted
            }
            guard let waiter = s.waiter else { return (offer, nil, nil, false) }
            if s.buffered >= s.window / 2 || s.receivePaused {
                s.waiter = nil
                s.pendingSince = 0
                return (offer, waiter, take(&s, maxLength: s.waiterMaxLength), false)
            }
            // Below the low-water mark: the loop's flush timer wakes the consumer if no more bytes come soon.
            guard s.pendingSince == 0 else { return (offer, nil, nil, false) }
            s.pendingSince = MonotonicClock.nanoseconds()
            return (offer, nil, nil, true)
        }
        if let waiter, let ready { waiter.resume(returning: ready) }
        return (result, needsFlush)
    }

    /// Copies `bytes` into the tail chunk, starting new chunks of `chunkBytes` capacity as they fill.
    private func append(_ s: inout State, _ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        s.received += Int64(bytes.count)
        s.buffered += bytes.count
        if s.chunks.count > s.headIndex {
            let last = s.chunks.count - 1
            let room = s.chunkBytes - s.chunks[last].count
            if room > 0 {
                let n = min(room, rest.count)
                s.chunks[last].append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<n]))
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            }
        }
        while !rest.isEmpty {
            // Reserve a whole chunk unless the declared length says less is coming (small JSON bodies).
            var size = s.chunkBytes
            if let expected = s.expectedLength {
                let coming = expected - s.received + Int64(rest.count)
                size = Int(clamping: min(Int64(size), max(Int64(rest.count), coming)))
            }
            let n = min(size, rest.count)
            var chunk = [UInt8]()
            chunk.reserveCapacity(size)
            chunk.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<n]))
            s.chunks.append(chunk)
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
    }

    /// Wakes a waiting consumer whose first unannounced bytes arrived at least `age` nanoseconds ago. Returns
    /// whether bytes are still pending for a waiting consumer (the loop must call again later).
    func flush(olderThan age: UInt64) -> Bool {
        let (waiter, ready, pending) = state.withLock {
            s -> (CheckedContinuation<Result<[UInt8]?, any Error>, Never>?, Result<[UInt8]?, any Error>?, Bool) in
            guard let waiter = s.waiter, s.pendingSince != 0, s.buffered > 0 else {
                s.pendingSince = 0
                return (nil, nil, false)
            }
            let due = s.buffered >= s.window / 2 || MonotonicClock.nanoseconds() &- s.pendingSince >= age
            guard due else { return (nil, nil, true) }
            s.waiter = nil
            s.pendingSince = 0
            return (waiter, take(&s, maxLength: s.waiterMaxLength), false)
        }
        if let waiter, let ready { waiter.resume(returning: ready) }
        return pending
    }

    /// The transfer ended: `nil` = cleanly, else with `error` (after the buffered bytes are consumed).
    func finish(_ error: (any Error)?) {
        let (waiter, ready) = state.withLock {
            s -> (CheckedContinuation<Result<[UInt8]?, any Error>, Never>?, Result<[UInt8]?, any Error>?) in
            if s.end != nil { return (nil, nil) }
            var failure = error
            if let expected = s.expectedLength, s.received < expected {
                if failure == nil || failure is UpstreamError && (failure as? UpstreamError) != .cancelled {
                    failure = ByteStreamError.truncated(expected: expected, received: s.received)
                }
            }
            if let failure { s.end = .failure(failure) } else { s.end = .success(()) }
            guard let waiter = s.waiter else { return (nil, nil) }
            s.waiter = nil
            s.pendingSince = 0
            return (waiter, take(&s, maxLength: s.waiterMaxLength))
        }
        if let waiter, let ready { waiter.resume(returning: ready) }
    }

    // MARK: consumer

    func next(maxLength: Int) async throws -> [UInt8]? {
        let maxLength = max(1, maxLength)
        if let ready = poll(maxLength: maxLength, orWait: nil) { return try ready.get() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8]?, any Error>, Never>) in
                if let ready = poll(maxLength: maxLength, orWait: continuation) {
                    continuation.resume(returning: ready)
                }
            }
        } onCancel: {
            cancel()
        }
        return try result.get()
    }

    /// Takes what is ready; when nothing is and `waiter` is given, parks it. Un-pauses the transfer once the
    /// buffer has drained to half its window.
    private func poll(
        maxLength: Int,
        orWait waiter: CheckedContinuation<Result<[UInt8]?, any Error>, Never>?
    ) -> Result<[UInt8]?, any Error>? {
        let (ready, wake) = state.withLock { s -> (Result<[UInt8]?, any Error>?, Bool) in
            // Gather into chunks the consumer takes whole (bounded so a paused buffer can still drain to half).
            let preferred = min(maxLength, capacity / 2)
            if preferred >= 4096 { s.chunkBytes = preferred }
            let ready = take(&s, maxLength: maxLength)
            if ready == nil, let waiter {
                s.waiter = waiter
                s.waiterMaxLength = maxLength
                if s.pausedSinceWait {
                    // Ran dry after a pause: the window did not cover the un-pause latency.
                    let grown = min(capacity, s.window * 2)
                    if grown > s.window, !s.cancelled, s.end == nil, budget.acquire(grown - s.window) {
                        s.window = grown
                    }
                    s.pausedSinceWait = false
                }
            }
            if s.receivePaused && s.buffered <= s.window / 2 && !s.cancelled {
                s.receivePaused = false
                if MonotonicClock.nanoseconds() &- s.pausedAt > Self.slowPauseNanoseconds {
                    // The consumer took long to drain half a window: it is slow (a slow client link), and a
                    // bigger buffer would only hold memory. Shrink towards the floor.
                    let shrunk = max(minimumWindow, s.window / 2)
                    budget.release(s.window - shrunk)
                    s.window = shrunk
                }
                return (ready, true)
            }
            return (ready, false)
        }
        if wake { resume() }
        return ready
    }

    /// Takes up to `maxLength` buffered bytes, or the end, or nil when the consumer must wait.
    private func take(_ s: inout State, maxLength: Int) -> Result<[UInt8]?, any Error>? {
        if s.cancelled { return .failure(ByteStreamError.cancelled) }
        if s.buffered > 0 {
            let count = s.chunks[s.headIndex].count
            let out: [UInt8]
            if s.headOffset == 0 && count <= maxLength {
                out = s.chunks[s.headIndex]
                s.chunks[s.headIndex] = []
                s.headIndex += 1
            } else {
                let end = min(count, s.headOffset + maxLength)
                out = Array(s.chunks[s.headIndex][s.headOffset..<end])
                if end == count {
                    s.chunks[s.headIndex] = []
                    s.headIndex += 1
                    s.headOffset = 0
                } else {
                    s.headOffset = end
                }
            }
            s.buffered -= out.count
            if s.headIndex == s.chunks.count {
                s.chunks.removeAll(keepingCapacity: true)
                s.headIndex = 0
            } else if s.headIndex > 64 {
                s.chunks.removeFirst(s.headIndex)
                s.headIndex = 0
            }
            return .success(out)
        }
        switch s.end {
        case .success?: return .success(nil)
        case .failure(let error)?: return .failure(error)
        case nil: return nil
        }
    }

    func cancel() {
        let (waiter, first) = state.withLock { s -> (CheckedContinuation<Result<[UInt8]?, any Error>, Never>?, Bool) in
            guard !s.cancelled else { return (nil, false) }
            s.cancelled = true
            s.chunks = []
            s.headIndex = 0
            s.headOffset = 0
            s.buffered = 0
            s.pendingSince = 0
            let waiter = s.waiter
            s.waiter = nil
            return (waiter, s.end == nil)
        }
        waiter?.resume(returning: .failure(ByteStreamError.cancelled))
        if first { abort() }
    }
}
