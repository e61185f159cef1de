internal import CCurl
import Dispatch
import PortcullisCore
#if canImport(Glibc)
import Glibc
#endif

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

/// One attempt of one request: a curl easy handle, its callbacks and its two bounded buffers.
///
/// Threading: everything but the buffers (which carry their own locks) is confined to the loop's queue;
/// `start` and `abort` only enqueue. curl's callbacks find the transfer through an unretained pointer set as
/// their user data; the loop keeps the transfer alive while its handle is in the multi handle.
///
/// Lifecycle: `start` → (head delivered to the continuation) → body streamed → `finish` exactly once, which
/// removes and cleans up the easy handle, closes the request-body pump, ends the response stream and reports
/// the outcome.
final class CurlTransfer: @unchecked Sendable {
    let loop: CurlEventLoop
    let request: UpstreamRequest
    let response: ResponseBodyStream
    private let requestBuffer: RequestBodyBuffer?
    /// curl's receive buffer per transfer (`CURLOPT_BUFFERSIZE`): the largest single write callback.
    private let receiveBufferBytes: Int
    private let onEnd: @Sendable (TransferOutcome) -> Void

    // Loop-queue state.
    private var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var headContinuation: CheckedContinuation<Result<TransferHead, UpstreamError>, Never>?
    private var status = 0
    private var headers: [(String, String)] = []
    private var headDelivered = false
    private var started = false
    private var finished = false
    private var abortedBeforeStart: UpstreamError?
    private var pendingError: UpstreamError?
    private var startTime: UInt64 = 0
    private var bytesOffset = 0
    private var streamSent: Int64 = 0
    private var firstByteTimer: (any DispatchSourceTimer)?
    private var firstByteArmed = false
    /// Monotonic time of the last body byte moved either way (or of our own pause); the idle timeout counts
    /// from here. curl's LOW_SPEED check averages over a ~5 s window, too coarse for short idle timeouts.
    private var lastActivity: UInt64 = 0

    init(loop: CurlEventLoop, request: UpstreamRequest, configuration: UpstreamConfiguration,
         onEnd: @escaping @Sendable (TransferOutcome) -> Void) {
        self.loop = loop
        self.request = request
        self.onEnd = onEnd
        receiveBufferBytes = min(512 * 1024, max(16 * 1024, configuration.receiveBufferBytes))
        errorBuffer.initialize(to: 0)
        if case .stream = request.body {
            requestBuffer = RequestBodyBuffer(capacity: configuration.requestBufferBytes)
        } else {
            requestBuffer = nil
        }
        // The stream's callbacks hold the transfer weakly: the consumer's stream must not keep a finished
        // transfer alive, and a live transfer is owned by the loop.
        let box = WeakTransfer()
        response = ResponseBodyStream(
            capacity: configuration.responseBufferBytes, maxWrite: receiveBufferBytes, budget: loop.windowBudget,
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
        loop.queue.async { [self] in
            headContinuation = continuation
            started = true
            startTime = MonotonicClock.nanoseconds()
            if let error = abortedBeforeStart { return finish(error) }
            do throws(UpstreamError) {
                try configure()
            } catch {
                return finish(error)
            }
            guard let easy, loop.add(self, easy: easy) else {
                return finish(.invalidRequest("curl_multi_add_handle failed"))
            }
            switch request.body {
            case .none: armFirstByteTimer()
            case .bytes(let bytes): if bytes.isEmpty { armFirstByteTimer() }
            case .stream(let stream, _):
                let buffer = requestBuffer!
                let box = WeakTransfer()
                box.transfer = self
                Task {
                    await buffer.pump(stream) { box.transfer?.enqueuePauseUpdate() }
                }
            }
        }
    }

    /// Aborts the transfer at once (consumer cancelled, task cancelled): the easy handle is removed, which
    /// closes its connection.
    func abort(_ error: UpstreamError) {
        loop.queue.async { [self] in
            if !started { abortedBeforeStart = error } else { finish(error) }
        }
    }

    /// Re-applies the pause state after a buffer changed (consumer drained, producer pushed).
    func enqueuePauseUpdate() {
        loop.queue.async { [self] in applyPauseState() }
    }

    // MARK: loop queue

    private func applyPauseState() {
        guard let easy, !finished else { return }
        var mask: Int32 = 0
        // A paused response pauses both directions (see `receiveBody`): the upload, if any, waits for the consumer.
        if response.isReceivePaused { mask |= pc_curl_pause_recv() | pc_curl_pause_send() }
        if requestBuffer?.isSendPaused == true { mask |= pc_curl_pause_send() }
        // May re-enter the write/read callbacks before it returns; they only touch the buffers' locks.
        _ = curl_easy_pause(easy, mask)
        loop.drainMessages()
    }

    /// Called by the loop when curl reports the transfer done.
    func complete(_ result: CURLcode) {
        if result == CURLE_OK { return finish(nil) }
        finish(pendingError ?? classify(result))
    }

    private func finish(_ error: UpstreamError?) {
        guard !finished else { return }
        finished = true
        firstByteTimer?.cancel()
        firstByteTimer = nil
        var bodyBytes: Int64 = 0
        if let easy {
            var downloaded: curl_off_t = 0
            _ = pc_curl_easy_getinfo_off(easy, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
            bodyBytes = Int64(downloaded)
            if status == 0 {
                var code: Int = 0
                _ = pc_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
                status = code
            }
            loop.remove(easy: easy)
            curl_easy_cleanup(easy)
            self.easy = nil
        }
        if let headerList {
            curl_slist_free_all(headerList)
            self.headerList = nil
        }
        if let requestBuffer {
            let unfinished = !requestBuffer.isFinished
            requestBuffer.close()
            if unfinished, case .stream(let stream, _) = request.body { stream.cancel() }
        }
        if !headDelivered {
            if let error {
                headContinuation?.resume(returning: .failure(error))
                headContinuation = nil
            } else {
                deliverHead()
            }
        }
        response.finish(error)
        onEnd(TransferOutcome(status: status == 0 ? nil : status, error: error, headDelivered: headDelivered,
                              bodyBytes: bodyBytes,
                              durationNanoseconds: MonotonicClock.nanoseconds() &- startTime))
    }

    private func classify(_ result: CURLcode) -> UpstreamError {
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
            if let easy { _ = pc_curl_easy_getinfo_off(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer) }
            if pretransfer == 0 { return .timedOut(.connect) }
            return headDelivered ? .timedOut(.idle) : .timedOut(.firstByte)
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

    private func armFirstByteTimer() {
        guard !firstByteArmed, !headDelivered, let seconds = request.timeouts.firstByte else { return }
        firstByteArmed = true
        let timer = DispatchSource.makeTimerSource(queue: loop.queue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(seconds * 1e9)))
        timer.setEventHandler { [weak self] in self?.finish(.timedOut(.firstByte)) }
        timer.activate()
        firstByteTimer = timer
    }

    private func deliverHead() {
        guard !headDelivered else { return }
        headDelivered = true
        firstByteTimer?.cancel()
        firstByteTimer = nil
        var length: Int64?
        if request.method != "HEAD", status >= 200, status != 204, status != 304,
           headers.first(ignoringCase: "transfer-encoding") == nil,
           let text = headers.first(ignoringCase: "content-length"), let value = Int64(text), value >= 0 {
            length = value
        }
        response.setExpectedLength(length)
        let head = TransferHead(status: status, headers: headers,
                                elapsedNanoseconds: MonotonicClock.nanoseconds() &- startTime)
        headContinuation?.resume(returning: .success(head))
        headContinuation = nil
    }

    // MARK: callbacks (loop queue, re-entrant from curl calls)

    fileprivate func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        var count = line.count
        while count > 0, line[count - 1] == 0x0D || line[count - 1] == 0x0A { count -= 1 }
        let text = Substring(String(decoding: UnsafeRawBufferPointer(rebasing: line[..<count]), as: UTF8.self))
        if text.hasPrefix("HTTP/") {
            let parts = text.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            headers = []
        } else if text.isEmpty {
            if status >= 200 { deliverHead() }
        } else if !headDelivered, let colon = text.firstIndex(of: ":") {
            let name = String(text[..<colon])
            let value = text[text.index(after: colon)...].trimmingSpaces()
            if headers.count < 200 { headers.append((name, value)) }
        }
        return line.count
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if !headDelivered { deliverHead() }
        lastActivity = MonotonicClock.nanoseconds()
        let (offer, needsFlush) = response.offer(bytes)
        if needsFlush { loop.scheduleFlush(response) }
        switch offer {
        case .accepted: return bytes.count
        case .acceptedPause:
            // Allowed from inside a callback; curl stops reading after this write returns. Both directions:
            // pausing only receiving makes curl 7.88 schedule the transfer at once with a forced socket read,
            // whose bytes it then keeps in a pause buffer of its own (a malloc'd copy per pause, held while
            // paused) — exactly what pausing early is meant to avoid. Sending is over for a response that streams.
            if let easy { _ = curl_easy_pause(easy, pc_curl_pause_recv() | pc_curl_pause_send()) }
            return bytes.count
        case .pause: return pc_curl_writefunc_pause()
        case .refused: return 0
        }
    }

    /// curl's progress callback (about once a second, and on every transfer step): enforces the idle timeout
    /// once the response head arrived. Time spent paused by us (a slow consumer) does not count.
    fileprivate func checkIdle() -> Int32 {
        guard let idle = request.timeouts.idle, headDelivered, !finished else { return 0 }
        let now = MonotonicClock.nanoseconds()
        if response.isReceivePaused || requestBuffer?.isSendPaused == true || lastActivity == 0 {
            lastActivity = now
            return 0
        }
        guard now &- lastActivity > UInt64(idle * 1e9) else { return 0 }
        pendingError = .timedOut(.idle)
        return 1
    }

    fileprivate func provideBody(_ destination: UnsafeMutableRawBufferPointer) -> Int {
        switch request.body {
        case .none:
            return 0
        case .bytes(let bytes):
            let n = min(destination.count, bytes.count - bytesOffset)
            if n > 0 {
                bytes.withUnsafeBytes { source in
                    destination.baseAddress!.copyMemory(from: source.baseAddress! + bytesOffset, byteCount: n)
                }
                bytesOffset += n
            }
            if bytesOffset == bytes.count { armFirstByteTimer() }
            return n
        case .stream(_, let length):
            switch requestBuffer!.take(into: destination) {
            case .bytes(let n):
                streamSent += Int64(n)
                lastActivity = MonotonicClock.nanoseconds()
                if let length, streamSent >= length { armFirstByteTimer() }
                return n
            case .end:
                armFirstByteTimer()
                return 0
            case .pause:
                return pc_curl_readfunc_pause()
            case .failed:
                pendingError = .requestBodyFailed(requestBuffer?.failure ?? "body stream failed")
                return pc_curl_readfunc_abort()
            }
        }
    }

    fileprivate func seekBody(offset: Int64, origin: Int32) -> Int32 {
        switch request.body {
        case .none:
            return CURL_SEEKFUNC_OK
        case .bytes(let bytes):
            guard origin == SEEK_SET, offset >= 0, offset <= Int64(bytes.count) else { return CURL_SEEKFUNC_FAIL }
            bytesOffset = Int(offset)
            return CURL_SEEKFUNC_OK
        case .stream:
            return (origin == SEEK_SET && offset == streamSent) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
        }
    }

    // MARK: easy handle set-up

    private func configure() throws(UpstreamError) {
        guard let easy = curl_easy_init() else { throw .invalidRequest("curl_easy_init failed") }
        self.easy = easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        func check(_ code: CURLcode, _ what: String) throws(UpstreamError) {
            guard code == CURLE_OK else {
                throw .invalidRequest("\(what): \(String(cString: curl_easy_strerror(code)))")
            }
        }
        try check(pc_curl_easy_setopt_string(easy, CURLOPT_URL, request.url), "URL")
        // Verbatim: no dot-segment removal, so S3 keys like `a/../b` reach the server (and the signer) as given.
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_PATH_AS_IS, 1)
        try check(pc_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "protocols")
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_TCP_NODELAY, 1)
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, receiveBufferBytes)
        if let connect = request.timeouts.connect {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(connect * 1000)))
        }
        if let idle = request.timeouts.idle {
            // Below 1 byte/s for `idle` seconds; curl exempts transfers we paused ourselves.
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(idle.rounded(.up))))
        }
        if !loop.verifyTLS {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0)
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0)
        }
        _ = pc_curl_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, transferWriteCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        _ = pc_curl_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me)
        _ = pc_curl_easy_setopt_long(easy, CURLOPT_NOPROGRESS, 0)
        _ = pc_curl_easy_setopt_xferinfo_function(easy, transferProgressCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, me)
        _ = pc_curl_easy_setopt_closesocket_function(easy, curlCloseSocketCallback)
        _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, loop.socketCloserPointer)

        // Method and body.
        let method = request.method.uppercased()
        guard !method.isEmpty, method.allSatisfy({ $0.isLetter }) else { throw .invalidRequest("bad method") }
        var bodyLength: Int64?
        var hasBody = true
        switch request.body {
        case .none: bodyLength = 0; hasBody = !["GET", "HEAD", "DELETE", "OPTIONS"].contains(method)
        case .bytes(let bytes): bodyLength = Int64(bytes.count)
        case .stream(_, let length): bodyLength = length
        }
        if !hasBody {
            // curl (7.88) still allocates its upload buffer (64 KiB by default) to send the request head over TLS;
            // a bodiless request needs only the minimum.
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_UPLOAD_BUFFERSIZE, 16 * 1024)
        }
        if method == "HEAD" {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if method == "GET" && !hasBody {
            _ = pc_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
        } else {
            if hasBody {
                // UPLOAD sends the body from the read callback with Content-Length (or chunked when unknown);
                // the custom method replaces its default PUT.
                _ = pc_curl_easy_setopt_long(easy, CURLOPT_UPLOAD, 1)
                _ = pc_curl_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(bodyLength ?? -1))
                _ = pc_curl_easy_setopt_read_function(easy, transferReadCallback)
                _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, me)
                _ = pc_curl_easy_setopt_seek_function(easy, transferSeekCallback)
                _ = pc_curl_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, me)
            }
            if method != "PUT" || !hasBody {
                try check(pc_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method), "method")
            }
        }

        // Headers.
        var list: UnsafeMutablePointer<curl_slist>?
        func add(_ line: String) { list = curl_slist_append(list, line) }
        for (name, value) in request.headers {
            guard !name.isEmpty, !name.contains(where: { $0 == ":" || $0 == "\r" || $0 == "\n" || $0 == " " }),
                  !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                curl_slist_free_all(list)
                throw .invalidRequest("header \(name) is malformed")
            }
            // `Name;` is curl's syntax for a header with an empty value.
            add(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if let sig = request.awsSigV4 {
            // Trap 2: curl does not add the payload hash header itself.
            if request.headers.first(ignoringCase: "x-amz-content-sha256") == nil {
                add("x-amz-content-sha256: UNSIGNED-PAYLOAD")
            }
            if let token = sig.sessionToken, request.headers.first(ignoringCase: "x-amz-security-token") == nil {
                add("x-amz-security-token: \(token)")
            }
            try check(pc_curl_easy_setopt_string(easy, CURLOPT_AWS_SIGV4, "aws:amz:\(sig.region):\(sig.service)"),
                      "AWS SigV4")
            _ = pc_curl_easy_setopt_string(easy, CURLOPT_USERNAME, sig.accessKeyID)
            _ = pc_curl_easy_setopt_string(easy, CURLOPT_PASSWORD, sig.secretAccessKey)
            // Trap 3: no header-removal entries (`Expect:`) — curl would sign a header it does not send.
        } else if hasBody {
            add("Expect:") // no 100-continue round trip
        }
        if hasBody && request.headers.first(ignoringCase: "content-type") == nil && bodyLength != 0 {
            add("Content-Type: application/octet-stream")
        }
        headerList = list
        if let list { _ = pc_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list) }
    }
}

/// Lets the response stream reach its transfer without keeping it alive.
private final class WeakTransfer: @unchecked Sendable {
    weak var transfer: CurlTransfer?
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

private func transfer(_ userdata: UnsafeMutableRawPointer?) -> CurlTransfer {
    Unmanaged<CurlTransfer>.fromOpaque(userdata!).takeUnretainedValue()
}

private let transferWriteCallback: curl_write_callback = { pointer, size, count, userdata in
    transfer(userdata).receiveBody(UnsafeRawBufferPointer(start: pointer, count: size * count))
}

private let transferProgressCallback: curl_xferinfo_callback = { userdata, _, _, _, _ in
    transfer(userdata).checkIdle()
}

private let transferHeaderCallback: curl_write_callback = { pointer, size, count, userdata in
    transfer(userdata).receiveHeader(UnsafeRawBufferPointer(start: pointer, count: size * count))
}

private let transferReadCallback: curl_read_callback = { pointer, size, count, userdata in
    transfer(userdata).provideBody(UnsafeMutableRawBufferPointer(start: pointer, count: size * count))
}

private let transferSeekCallback: curl_seek_callback = { userdata, offset, origin in
    transfer(userdata).seekBody(offset: Int64(offset), origin: origin)
}


