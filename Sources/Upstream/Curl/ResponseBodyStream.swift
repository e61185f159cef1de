import PortcullisCore
import Synchronization

/// The consumer side of a transfer's response body: a bounded buffer between curl's write callback (producer,
/// on the loop queue) and one async consumer.
///
/// Backpressure: `offer` refuses bytes once `capacity` is reached (the write callback then returns
/// `CURL_WRITEFUNC_PAUSE`); when the consumer has drained the buffer to half, it asks the transfer to un-pause.
/// So at most `capacity` + one curl write chunk is buffered per transfer.
final class ResponseBodyStream: ByteStream {
    enum Offer { case accepted, pause, refused }

    private struct State {
        var chunks: [[UInt8]] = []
        var headIndex = 0
        var headOffset = 0
        var buffered = 0
        var received: Int64 = 0
        var end: Result<Void, any Error>?
        var waiter: CheckedContinuation<Result<[UInt8]?, any Error>, Never>?
        var receivePaused = false
        var cancelled = false
        var expectedLength: Int64?
    }

    private let state = Mutex(State())
    private let capacity: Int
    /// Asks the transfer to re-evaluate its pause state (un-pause receiving) on the loop queue.
    private let resume: @Sendable () -> Void
    /// Aborts the transfer (consumer cancelled).
    private let abort: @Sendable () -> Void

    init(capacity: Int, resume: @escaping @Sendable () -> Void, abort: @escaping @Sendable () -> Void) {
        self.capacity = max(16 * 1024, capacity)
        self.resume = resume
        self.abort = abort
    }

    var expectedLength: Int64? { state.withLock { $0.expectedLength } }

    var isReceivePaused: Bool { state.withLock { $0.receivePaused } }

    var bufferedBytes: Int { state.withLock { $0.buffered } }

    // MARK: producer (loop queue)

    func setExpectedLength(_ length: Int64?) { state.withLock { $0.expectedLength = length } }

    func offer(_ bytes: UnsafeRawBufferPointer) -> Offer {
        let (result, waiter, chunk) = state.withLock { s -> (Offer, CheckedContinuation<Result<[UInt8]?, any Error>, Never>?, [UInt8]?) in
            if s.cancelled || s.end != nil { return (.refused, nil, nil) }
            if s.buffered > 0 && s.buffered + bytes.count > capacity {
                s.receivePaused = true
                return (.pause, nil, nil)
            }
            let chunk = [UInt8](bytes)
            s.received += Int64(chunk.count)
            if let waiter = s.waiter {
                // The consumer is waiting with an empty buffer: hand the chunk over directly.
                s.waiter = nil
                return (.accepted, waiter, chunk)
            }
            s.chunks.append(chunk)
            s.buffered += chunk.count
            return (.accepted, nil, nil)
        }
        if let waiter { waiter.resume(returning: .success(chunk)) }
        return result
    }

    /// The transfer ended: `nil` = cleanly, else with `error` (after the buffered bytes are consumed).
    func finish(_ error: (any Error)?) {
        let (waiter, end) = state.withLock { s -> (CheckedContinuation<Result<[UInt8]?, any Error>, Never>?, Result<[UInt8]?, any Error>) in
            if s.end != nil { return (nil, .success(nil)) }
            var failure = error
            if let expected = s.expectedLength, s.received < expected {
                if failure == nil || failure is UpstreamError && (failure as? UpstreamError) != .cancelled {
                    failure = ByteStreamError.truncated(expected: expected, received: s.received)
                }
            }
            if let failure { s.end = .failure(failure) } else { s.end = .success(()) }
            let waiter = s.waiter
            s.waiter = nil
            return (waiter, failure.map { .failure($0) } ?? .success(nil))
        }
        waiter?.resume(returning: end)
    }

    // MARK: consumer

    func next(maxLength: Int) async throws -> [UInt8]? {
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
        if case .success(let chunk?) = result, chunk.count > maxLength {
            // A directly handed-over chunk larger than asked: keep the rest at the head of the buffer.
            state.withLock { s in
                s.chunks.insert(Array(chunk[maxLength...]), at: s.headIndex)
                s.buffered += chunk.count - maxLength
            }
            return Array(chunk[..<maxLength])
        }
        return try result.get()
    }

    /// Takes what is ready; when nothing is and `waiter` is given, parks it. Un-pauses the transfer once the
    /// buffer has drained to half its capacity.
    private func poll(maxLength: Int,
                      orWait waiter: CheckedContinuation<Result<[UInt8]?, any Error>, Never>?) -> Result<[UInt8]?, any Error>? {
        let (ready, wake) = state.withLock { s -> (Result<[UInt8]?, any Error>?, Bool) in
            let ready = take(&s, maxLength: maxLength)
            if ready == nil, let waiter { s.waiter = waiter }
            if s.receivePaused && s.buffered <= capacity / 2 && !s.cancelled {
                s.receivePaused = false
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
            let chunk = s.chunks[s.headIndex]
            let out: [UInt8]
            if s.headOffset == 0 && chunk.count <= maxLength {
                out = chunk
                s.chunks[s.headIndex] = []
                s.headIndex += 1
            } else {
                let end = min(chunk.count, s.headOffset + max(1, maxLength))
                out = Array(chunk[s.headOffset..<end])
                if end == chunk.count {
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
            let waiter = s.waiter
            s.waiter = nil
            return (waiter, s.end == nil)
        }
        waiter?.resume(returning: .failure(ByteStreamError.cancelled))
        if first { abort() }
    }
}
