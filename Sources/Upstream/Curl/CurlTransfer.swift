internal import CCurl
import PortcullisCore

/// The response head, handed to `send` as soon as the final status line and headers are in.
struct TransferHead: Sendable {
    let status: Int
    let headers: [(String, String)]
    let elapsedNanoseconds: UInt64
}

/// How a transfer ended, reported exactly once (metrics, circuit breaker).
struct TransferOutcome: Sendable {
    let status: Int?
    let error: UpstreamError?
    let headDelivered: Bool
    let bodyBytes: Int64
    let durationNanoseconds: UInt64
}

/// What a running transfer owns: the payload of `TransferLifecycle`'s running states (`sending`,
/// `awaitingHead`, `streaming`). Cleaned up exactly once, by `CurlTransfer.finish`.
final class CurlHandle {
    let easy: UnsafeMutableRawPointer
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// Resumed exactly once: with the head, or with the failure that came before one.
    var headWaiter: CheckedContinuation<Result<TransferHead, UpstreamError>, Never>?
    /// The response head being collected (the last status line and its fields; interim 1xx heads reset it).
    var status = 0
    var headers: [(String, String)] = []
    /// How much of an in-memory request body curl has taken (it may seek back), and of a streamed one.
    var bytesOffset = 0
    var streamSent: Int64 = 0
    /// An error a callback decided (upstream idle, a failed body stream), reported when curl completes.
    var pendingError: UpstreamError?

    init(easy: UnsafeMutableRawPointer) { self.easy = easy }
}

/// One attempt of one request: a curl easy handle, its callbacks and its two bounded buffers, with its
/// lifecycle in one `TransferLifecycle` (see there for the states, what each owns, and both timeouts).
///
/// Threading: everything but the buffers (which carry their own locks) is confined to the thread of the multi
/// handle's host. `start` runs at once when called there (an exchange on its connection's loop), else it enqueues;
/// `abort` always enqueues (it may come from inside a callback). curl's callbacks find the transfer through an
/// unretained pointer set as their user data; the multi handle keeps the transfer alive while its handle is added.
final class CurlTransfer: @unchecked Sendable {
    let multi: CurlMulti
    let request: UpstreamRequest
    let response: ResponseBodyStream
    let requestBuffer: RequestBodyBuffer?
    /// curl's receive buffer per transfer (`CURLOPT_BUFFERSIZE`): the largest single write callback.
    let receiveBufferBytes: Int
    private let onEnd: @Sendable (TransferOutcome) -> Void
    /// Where curl writes its error text (`CURLOPT_ERRORBUFFER`); lives as long as the transfer.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    // Host-thread state.
    var lifecycle: TransferLifecycle<CurlHandle>
    private var startTime: UInt64 = 0

    init(
        multi: CurlMulti, request: UpstreamRequest, configuration: UpstreamConfiguration,
        onEnd: @escaping @Sendable (TransferOutcome) -> Void
    ) {
        self.multi = multi
        self.request = request
        self.onEnd = onEnd
        let sizing = ReceiveSizing.choose(
            expectedBodyBytes: request.expectedBodyBytes, configuration: configuration, budget: multi.bulkBudget)
        receiveBufferBytes = sizing.receiveBufferBytes
        lifecycle = TransferLifecycle(
            firstByteTimeout: request.timeouts.firstByte.map { UInt64($0 * 1e9) },
            idleTimeout: request.timeouts.idle.map { UInt64($0 * 1e9) })
        errorBuffer.initialize(to: 0)
        if case .stream = request.body {
            requestBuffer = RequestBodyBuffer(capacity: configuration.requestBufferBytes)
        } else {
            requestBuffer = nil
        }
        // The stream's callbacks hold the transfer weakly: the consumer's stream must not keep a finished
        // transfer alive, and a live transfer is owned by its multi handle.
        let box = WeakTransfer()
        response = ResponseBodyStream(
            capacity: sizing.responseBufferBytes, maxWrite: receiveBufferBytes, budget: multi.windowBudget,
            reservation: sizing.reservedBytes > 0 ? (multi.bulkBudget, sizing.reservedBytes) : nil,
            resume: { [box] in box.transfer?.enqueuePauseUpdate() },
            abort: { [box] in box.transfer?.abort(.cancelled) })
        box.transfer = self
    }

    deinit {
        errorBuffer.deallocate()
    }

    // MARK: control (any thread)

    /// Starts the transfer; `continuation` receives the head or the failure before any head.
    func start(_ continuation: CheckedContinuation<Result<TransferHead, UpstreamError>, Never>) {
        if multi.mayRunInline {
            begin(continuation)
        } else {
            multi.execute { [self] in begin(continuation) }
        }
    }

    /// `start` on the host's thread.
    private func begin(_ continuation: CheckedContinuation<Result<TransferHead, UpstreamError>, Never>) {
        startTime = MonotonicClock.nanoseconds()
        if let error = lifecycle.takeEarlyAbort() {
            continuation.resume(returning: .failure(error))
            return report(error, status: nil, headDelivered: false, bodyBytes: 0)
        }
        let handle: CurlHandle
        do throws(UpstreamError) {
            handle = try configure()
        } catch {
            continuation.resume(returning: .failure(error))
            return report(error, status: nil, headDelivered: false, bodyBytes: 0)
        }
        handle.headWaiter = continuation
        let requestComplete: Bool
        switch request.body {
        case .none: requestComplete = true
        case .bytes(let bytes): requestComplete = bytes.isEmpty
        case .stream: requestComplete = false
        }
        let deadline = lifecycle.start(handle, requestComplete: requestComplete, now: startTime)
        guard multi.add(self, easy: handle.easy) else {
            return finish(.invalidRequest("curl_multi_add_handle failed"))
        }
        if let deadline { multi.setFirstByteDeadline(deadline, easy: handle.easy) }
        if case .stream(let stream, _) = request.body, let buffer = requestBuffer {
            let box = WeakTransfer()
            box.transfer = self
            Task {
                await buffer.pump(stream) { box.transfer?.enqueuePauseUpdate() }
            }
        }
    }

    /// Aborts the transfer at once (consumer cancelled, task cancelled): the easy handle is removed, which
    /// closes its connection.
    func abort(_ error: UpstreamError) {
        multi.execute { [self] in
            if !lifecycle.abortBeforeStart(error) { finish(error) }
        }
    }

    /// Re-applies the pause state after a buffer changed (consumer drained, producer pushed).
    func enqueuePauseUpdate() {
        multi.execute { [self] in applyPauseState() }
    }

    // MARK: host thread

    private func applyPauseState() {
        guard let easy = lifecycle.handle?.easy else { return }
        var mask: Int32 = 0
        // A paused response pauses both directions (see `receiveBody`): the upload, if any, waits for the consumer.
        if response.isReceivePaused { mask |= pc_curl_pause_recv() | pc_curl_pause_send() }
        if requestBuffer?.isSendPaused == true { mask |= pc_curl_pause_send() }
        multi.pause(easy: easy, mask: mask)
    }

    /// Called by the multi handle when curl reports the transfer done.
    func complete(_ result: CURLcode) {
        if result == CURLE_OK { return finish(nil) }
        finish(lifecycle.handle?.pendingError ?? classify(result))
    }

    /// Ends the transfer exactly once: delivers the head (a clean end without one still has a status) or the
    /// failure to the waiter, removes and cleans up the easy handle, closes the request-body pump, ends the
    /// response stream and reports the outcome.
    func finish(_ error: UpstreamError?) {
        guard !lifecycle.isFinished else { return }
        if error == nil { deliverHead() }
        let (handle, headDelivered) = lifecycle.finish()
        var bodyBytes: Int64 = 0
        var status = 0
        if let handle {
            var downloaded: curl_off_t = 0
            _ = pc_curl_easy_getinfo_off(handle.easy, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
            bodyBytes = Int64(downloaded)
            status = handle.status
            if status == 0 {
                var code: Int = 0
                _ = pc_curl_easy_getinfo_long(handle.easy, CURLINFO_RESPONSE_CODE, &code)
                status = code
            }
            multi.remove(easy: handle.easy)
            multi.recycle(easy: handle.easy)
            if let list = handle.headerList { curl_slist_free_all(list) }
            handle.headerList = nil
            if let waiter = handle.headWaiter {
                handle.headWaiter = nil
                waiter.resume(returning: .failure(error ?? .transfer("the transfer ended without a response head")))
            }
        }
        if let requestBuffer {
            let unfinished = !requestBuffer.isFinished
            requestBuffer.close()
            if unfinished, case .stream(let stream, _) = request.body { stream.cancel() }
        }
        report(error, status: status == 0 ? nil : status, headDelivered: headDelivered, bodyBytes: bodyBytes)
    }

    private func report(_ error: UpstreamError?, status: Int?, headDelivered: Bool, bodyBytes: Int64) {
        response.finish(error)
        onEnd(
            TransferOutcome(
                status: status, error: error, headDelivered: headDelivered, bodyBytes: bodyBytes,
                durationNanoseconds: MonotonicClock.nanoseconds() &- startTime))
    }

    func classify(_ result: CURLcode) -> UpstreamError {
        let detail: String = {
            let text = String(cString: errorBuffer)
            return text.isEmpty ? String(cString: curl_easy_strerror(result)) : text
        }()
        switch result {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT,
            CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION:
            return .connectFailed(detail)
        case CURLE_OPERATION_TIMEDOUT:
            var pretransfer: curl_off_t = 0
            if let easy = lifecycle.handle?.easy {
                _ = pc_curl_easy_getinfo_off(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
            }
            if pretransfer == 0 { return .timedOut(.connect) }
            return lifecycle.headDelivered ? .timedOut(.idle) : .timedOut(.firstByte)
        case CURLE_WRITE_ERROR:
            return .cancelled
        case CURLE_READ_ERROR, CURLE_ABORTED_BY_CALLBACK:
            return .requestBodyFailed(requestBuffer?.failure ?? detail)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return .invalidRequest(detail)
        default:
            return .transfer("curl error \(result.rawValue): \(detail)")
        }
    }

    // MARK: the head and its deadline

    /// The whole request is sent: the first-byte deadline starts now.
    func requestSent() {
        guard let handle = lifecycle.handle, let deadline = lifecycle.requestSent(now: multi.turnTime)
        else { return }
        multi.setFirstByteDeadline(deadline, easy: handle.easy)
    }

    /// The loop's deadline for the head passed (it was set from `lifecycle`, which decides).
    func firstByteDeadlinePassed() {
        if let error = lifecycle.expiry(now: multi.turnTime) { finish(error) }
    }

    /// The final head is in: hand it to the waiter (`awaitingHead` → `streaming`). Later calls do nothing.
    func deliverHead() {
        guard let handle = lifecycle.headArrived(now: multi.turnTime) else { return }
        multi.cancelFirstByteDeadline(easy: handle.easy)
        var length: Int64?
        if request.method != "HEAD", handle.status >= 200, handle.status != 204, handle.status != 304,
            handle.headers.first(ignoringCase: "transfer-encoding") == nil,
            let text = handle.headers.first(ignoringCase: "content-length"), let value = Int64(text), value >= 0
        {
            length = value
        }
        response.setExpectedLength(length)
        let head = TransferHead(
            status: handle.status, headers: handle.headers,
            elapsedNanoseconds: MonotonicClock.nanoseconds() &- startTime)
        handle.headWaiter?.resume(returning: .success(head))
        handle.headWaiter = nil
    }
}

/// Lets the response stream reach its transfer without keeping it alive.
private final class WeakTransfer: @unchecked Sendable {
    weak var transfer: CurlTransfer?
}
