import PortcullisCore
import Synchronization

/// The producer side of a streamed request body: a pump task pulls chunks from the caller's `ByteStream`
/// into this bounded buffer; curl's read callback (loop thread) copies them out.
///
/// Backpressure both ways: the pump waits while `capacity` bytes are buffered; the read callback answers
/// `CURL_READFUNC_PAUSE` when the buffer is empty, and the pump asks the transfer to un-pause after its next
/// push.
final class RequestBodyBuffer: Sendable {
    enum Take { case bytes(Int), end, pause, failed }

    private struct State {
        var chunks: [[UInt8]] = []
        var headOffset = 0
        var buffered = 0
        var finished = false
        var failure: String?
        var sendPaused = false
        var spaceWaiter: CheckedContinuation<Bool, Never>?
        var closed = false
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(16 * 1024, capacity) }

    var isSendPaused: Bool { state.withLock { $0.sendPaused } }
    var failure: String? { state.withLock { $0.failure } }
    /// Whether the producer stream reached its end (or failed).
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Pulls `stream` until its end, a failure, or `close()`. `wake` is called when curl must be un-paused.
    func pump(_ stream: any ByteStream, wake: @escaping @Sendable () -> Void) async {
        do {
            while await waitForSpace() {
                guard let chunk = try await stream.next(maxLength: 64 * 1024) else {
                    if push(nil, failure: nil) { wake() }
                    return
                }
                if push(chunk, failure: nil) { wake() }
            }
            stream.cancel()  // closed early: the upstream no longer wants the body
        } catch {
            if push(nil, failure: "\(error)") { wake() }
        }
    }

    /// Waits until there is room; false once the buffer was closed.
    private func waitForSpace() async -> Bool {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> Bool? in
                if s.closed { return false }
                if s.buffered < capacity { return true }
                s.spaceWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Appends a chunk, or marks the end (`chunk` nil). Returns whether curl is paused waiting for bytes.
    private func push(_ chunk: [UInt8]?, failure: String?) -> Bool {
        state.withLock { s in
            if s.closed { return false }
            if let chunk, !chunk.isEmpty {
                s.chunks.append(chunk)
                s.buffered += chunk.count
            } else {
                s.finished = true
                s.failure = failure
            }
            defer { s.sendPaused = false }
            return s.sendPaused
        }
    }

    /// Read callback (loop thread): copies up to `capacity` bytes into `destination`.
    func take(into destination: UnsafeMutableRawBufferPointer) -> Take {
        let (result, waiter) = state.withLock { s -> (Take, CheckedContinuation<Bool, Never>?) in
            if s.buffered == 0 {
                if s.failure != nil { return (.failed, nil) }
                if s.finished { return (.end, nil) }
                s.sendPaused = true
                return (.pause, nil)
            }
            var written = 0
            while written < destination.count, !s.chunks.isEmpty {
                let chunk = s.chunks[0]
                let n = min(destination.count - written, chunk.count - s.headOffset)
                chunk.withUnsafeBytes { source in
                    destination.baseAddress!.advanced(by: written)
                        .copyMemory(from: source.baseAddress!.advanced(by: s.headOffset), byteCount: n)
                }
                written += n
                s.headOffset += n
                if s.headOffset == chunk.count {
                    s.chunks.removeFirst()
                    s.headOffset = 0
                }
            }
            s.buffered -= written
            let waiter = s.buffered < capacity ? s.spaceWaiter : nil
            if waiter != nil { s.spaceWaiter = nil }
            return (.bytes(written), waiter)
        }
        waiter?.resume(returning: true)
        return result
    }

    /// Stops the pump (transfer finished or aborted); the producer stream is cancelled by the pump.
    func close() {
        let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            s.closed = true
            s.chunks = []
            s.buffered = 0
            defer { s.spaceWaiter = nil }
            return s.spaceWaiter
        }
        waiter?.resume(returning: false)
    }
}
