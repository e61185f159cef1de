public import PortcullisCore
import Synchronization

/// An async HTTP client over libcurl multi handles (see `CurlMulti`): connection reuse, bodies streamed both
/// ways with bounded buffers, timeouts, retries for idempotent requests and a circuit breaker per backend.
///
/// Where a transfer runs: a request sent from an event loop that hosts guests (`SocketHosts.current`: the HTTP
/// server's epoll loops) runs on that loop, in a multi handle of this client's made there on first use; any
/// other caller's runs on the client's own thread (`CurlLoopThread`). Each multi handle keeps its own connection
/// pool, so the connection limits apply per loop.
///
/// One client per process is the intent. Thread-safe.
public final class UpstreamClient: Sendable {
    /// The client's own thread and its multi handle, for callers on no hosting loop.
    let ownThread: CurlLoopThread
    private let ownMulti: CurlMulti
    /// This client's multi handle on each hosting loop that sent a request, by the host's identity.
    private let hosted = Mutex<[ObjectIdentifier: CurlMulti]>([:])
    private let shared: CurlShared
    private let configuration: UpstreamConfiguration
    private let breaker: CircuitBreaker
    private let metrics: UpstreamMetrics?
    private let logger: Logger

    public init(
        configuration: UpstreamConfiguration = .init(), metrics: MetricsRegistry? = nil,
        logger: Logger = .disabled
    ) {
        let shared = CurlShared(configuration: configuration)
        let thread = CurlLoopThread()
        self.shared = shared
        ownThread = thread
        ownMulti = CurlMulti.made(on: thread, shared: shared)
        self.configuration = configuration
        self.breaker = CircuitBreaker(
            threshold: configuration.breakerThreshold,
            cooldown: configuration.breakerCooldown)
        self.metrics = metrics.map {
            UpstreamMetrics(
                registry: $0,
                activeTransfers: { [weak shared] in
                    Double(shared?.active.load(ordering: .relaxed) ?? 0)
                })
        }
        self.logger = logger
    }

    deinit {
        ownMulti.stop()
        ownThread.stop()
        for multi in hosted.withLock({ Array($0.values) }) { multi.stop() }
    }

    /// Transfers currently holding a curl easy handle (leak checks; 0 when idle).
    public var activeTransfers: Int { shared.active.load(ordering: .relaxed) }

    /// What is left of the bulk budget (`UpstreamConfiguration.bulkBudgetBytes`); tests check it comes back.
    var bulkBudgetAvailable: Int { shared.bulkBudget.availableBytes }

    /// This client's multi handles on hosting loops (tests).
    var hostedMultis: [CurlMulti] { hosted.withLock { Array($0.values) } }
    var hostedMultiCount: Int { hosted.withLock { $0.count } }

    /// The multi handle a transfer started here runs in: this client's on the calling thread's host, made there
    /// on first use, or the one on the client's own thread.
    private func multiForCurrentThread() -> CurlMulti {
        guard let host = SocketHosts.current, host !== ownThread else { return ownMulti }
        let key = ObjectIdentifier(host)
        if let multi = hosted.withLock({ $0[key] }) { return multi }
        // On the host's thread: the only thread that adds this key.
        let multi = CurlMulti(host: host, shared: shared)
        multi.attach()
        hosted.withLock { $0[key] = multi }
        return multi
    }

    /// Whether `backend`'s circuit lets requests through (closed, or due for its half-open probe): the
    /// readiness signal for `/readyz`.
    public func isAvailable(backend: String) -> Bool { breaker.isAvailable(backend) }

    /// Sends `request` and returns as soon as the response head arrives; the body streams afterwards.
    ///
    /// Retries (jittered exponential backoff, `configuration.maxAttempts` in total) happen only for
    /// idempotent requests with a replayable body that failed before the head was returned — on connection
    /// failures, timeouts before the head, broken transfers, and `retryStatuses`. The whole call, attempts and
    /// backoff together, waits no longer than `configuration.requestDeadline` (see there). The caller must
    /// consume or cancel `body`; dropping it also aborts the transfer.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        let retryable = request.idempotent && request.body.isReplayable
        let deadline = configuration.requestDeadline.map { RequestDeadline(seconds: $0) }
        var attempt = 1
        // The last failure that was the upstream's own. A timeout of a wait the deadline had capped says only
        // that the deadline came — on a busy machine possibly before the refusal that attempt would have seen
        // was even read — so when one ends the call, the caller learns the failure before it instead.
        var lastOwnFailure: UpstreamError?
        while true {
            if Task.isCancelled { throw .cancelled }
            let admission = breaker.admit(request.backend)
            if case .rejected(let seconds) = admission {
                metrics?.requests.labels(request.backend, request.operation, "circuit_open").increment()
                throw .circuitOpen(retryAfter: seconds)
            }
            var limited = request
            if let deadline { limited.timeouts = request.timeouts.waits(cappedAt: deadline.remainingSeconds) }
            let cutShort = limited.timeouts != request.timeouts
            let result = await attemptOnce(limited, resends: attempt - 1)
            let mayRetry = retryable && attempt < configuration.maxAttempts
            switch result {
            case .success(let response):
                if configuration.retryStatuses.contains(response.status) {
                    breaker.recordFailure(request.backend)
                    if mayRetry,
                        let delay = backoffDelay(
                            attempt: attempt, retryAfter: response.header("retry-after"),
                            within: deadline)
                    {
                        response.body.cancel()
                        try await sleep(seconds: delay)
                        attempt += 1
                        continue
                    }
                } else {
                    breaker.recordSuccess(request.backend)
                }
                return response
            case .failure(let error):
                let deadlineCut: Bool
                if case .timedOut = error { deadlineCut = cutShort } else { deadlineCut = false }
                if error.countsAsBackendFailure {
                    breaker.recordFailure(request.backend)
                } else {
                    breaker.recordNeutral(request.backend)
                }
                guard mayRetry, error.countsAsBackendFailure,
                    let delay = backoffDelay(attempt: attempt, retryAfter: nil, within: deadline)
                else {
                    if deadlineCut, let earlier = lastOwnFailure { throw earlier }
                    throw error
                }
                if !deadlineCut { lastOwnFailure = error }
                logger.debug(
                    "upstream attempt failed; retrying",
                    [
                        ("backend", .string(request.backend)), ("op", .string(request.operation)),
                        ("attempt", .int(Int64(attempt))), ("error", .string(error.description)),
                    ])
                try await sleep(seconds: delay)
                attempt += 1
            }
        }
    }

    /// Sends `request` and reads the whole body, refusing more than `maxBytes` (`.tooLarge`). For small
    /// bodies only (JSON, JWKS, XML listings).
    public func fetch(_ request: UpstreamRequest, maxBytes: Int) async throws(UpstreamError)
        -> (status: Int, headers: [(String, String)], body: [UInt8])
    {
        let response = try await send(request)
        do {
            let body = try await response.body.collect(limit: maxBytes)
            return (response.status, response.headers, body)
        } catch let error as UpstreamError {
            throw error
        } catch ByteStreamError.limitExceeded {
            throw .tooLarge(limit: maxBytes)
        } catch ByteStreamError.cancelled {
            throw .cancelled
        } catch {
            throw .transfer("\(error)")
        }
    }

    // MARK: attempts

    private func attemptOnce(_ original: UpstreamRequest, resends: Int) async -> Result<UpstreamResponse, UpstreamError>
    {
        let metrics = self.metrics
        let breaker = self.breaker
        var traced = original
        let span = Self.traceAttempt(&traced, resends: resends)
        let request = traced
        let transfer = CurlTransfer(multi: multiForCurrentThread(), request: request, configuration: configuration) {
            outcome in
            if let span { Self.end(span, outcome) }
            guard let metrics else { return Self.judgeBody(outcome, request: request, breaker: breaker) }
            metrics.duration.labels(request.backend, request.operation)
                .observe(Double(outcome.durationNanoseconds) / 1e9)
            if !outcome.headDelivered {
                let label = outcome.error?.metricLabel ?? "error"
                metrics.requests.labels(request.backend, request.operation, label).increment()
            } else if let error = outcome.error {
                let reason =
                    error == .cancelled ? "cancelled" : (error.metricLabel == "timeout" ? "timeout" : "truncated")
                metrics.streamErrors.labels(request.backend, request.operation, reason).increment()
            }
            Self.judgeBody(outcome, request: request, breaker: breaker)
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in transfer.start(continuation) }
        } onCancel: {
            transfer.abort(.cancelled)
        }
        switch result {
        case .success(let head):
            metrics?.requests.labels(request.backend, request.operation, String(head.status)).increment()
            return .success(
                UpstreamResponse(
                    status: head.status, headers: head.headers,
                    body: UpstreamBody(transfer.response),
                    timeToHeadNanoseconds: head.elapsedNanoseconds))
        case .failure(let error):
            return .failure(error)
        }
    }

    /// Adds the trace headers of one attempt to `request` and starts its client span (nil when the trace is not
    /// recorded; then the headers name the trace's current span as the parent).
    private static func traceAttempt(_ request: inout UpstreamRequest, resends: Int) -> Span? {
        guard let trace = request.trace else { return nil }
        var span = trace.startSpan("\(request.method) \(request.operation)", kind: .client)
        request.headers.append(contentsOf: (span?.data.context ?? trace.context).headers)
        if span != nil {
            span?.setAttribute("http.request.method", request.method)
            span?.setAttribute("server.address", UpstreamRequest.host(of: request.url))
            span?.setAttribute("portcullis.upstream.backend", request.backend)
            span?.setAttribute("portcullis.upstream.operation", request.operation)
            if resends > 0 { span?.setAttribute("http.request.resend_count", resends) }
        }
        return span
    }

    /// Ends an attempt's span when its transfer ends (body included): status, bytes, and the error if any.
    private static func end(_ started: Span, _ outcome: TransferOutcome) {
        var span = started
        if let status = outcome.status, status > 0 {
            span.setAttribute("http.response.status_code", status)
            if status >= 500 { span.setError("HTTP \(status)") }
        }
        span.setAttribute("http.response.body.size", .int(outcome.bodyBytes))
        if let error = outcome.error {
            // Cancelled is our own doing (a retry dropping a refused answer, a client that went away): noted,
            // not an upstream failure.
            if error == .cancelled {
                span.setAttribute("portcullis.upstream.cancelled", .bool(true))
            } else {
                span.setAttribute("error.type", error.metricLabel)
                span.setError(error.description)
            }
        }
        span.end()
    }

    /// A body that broke after the head counts against the backend (the upstream cut it).
    private static func judgeBody(_ outcome: TransferOutcome, request: UpstreamRequest, breaker: CircuitBreaker) {
        if outcome.headDelivered, let error = outcome.error, error.countsAsBackendFailure {
            breaker.recordFailure(request.backend)
        }
    }

    /// The pause before the next attempt (full jitter, at least a `Retry-After` within `maxBackoff`), or nil
    /// when the deadline would pass before the pause ends: then no further attempt is made.
    private func backoffDelay(attempt: Int, retryAfter: String?, within deadline: RequestDeadline?) -> Double? {
        let ceiling = min(configuration.maxBackoff, configuration.baseBackoff * Double(1 << min(attempt - 1, 20)))
        var delay = Double.random(in: 0...max(0, ceiling))
        if let retryAfter, let seconds = Double(retryAfter), seconds >= 0, seconds <= configuration.maxBackoff {
            delay = max(delay, seconds)
        }
        if let deadline, delay >= deadline.remainingSeconds { return nil }
        return delay
    }

    private func sleep(seconds: Double) async throws(UpstreamError) {
        do {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        } catch {
            throw .cancelled
        }
    }
}

/// The end of one `send`'s waiting time on the monotonic clock.
private struct RequestDeadline {
    let end: UInt64

    init(seconds: Double) { end = MonotonicClock.nanoseconds() &+ UInt64(max(0, seconds) * 1e9) }

    /// Seconds left (0 once passed).
    var remainingSeconds: Double {
        let now = MonotonicClock.nanoseconds()
        return now >= end ? 0 : Double(end - now) / 1e9
    }
}

extension UpstreamTimeouts {
    /// These limits with the waits before the response head — connect and first byte — no longer than
    /// `seconds` (a disabled limit becomes `seconds`). The idle limit, which governs moving bodies, is kept.
    fileprivate func waits(cappedAt seconds: Double) -> UpstreamTimeouts {
        // curl treats a connect timeout of 0 as "none": keep the cap a positive instant.
        let cap = max(seconds, 0.001)
        return UpstreamTimeouts(connect: min(connect ?? cap, cap), firstByte: min(firstByte ?? cap, cap), idle: idle)
    }
}

/// The body handed to callers: forwards to the transfer's stream, and aborts the transfer if the caller drops
/// it without reading to the end or cancelling (so an abandoned response never pins a connection).
final class UpstreamBody: ByteStream {
    private let stream: ResponseBodyStream
    init(_ stream: ResponseBodyStream) { self.stream = stream }
    deinit { stream.cancel() }
    var expectedLength: Int64? { stream.expectedLength }
    /// Bytes buffered and not yet consumed (tests check the bound).
    var bufferedBytes: Int { stream.bufferedBytes }
    /// The most bytes buffered for the caller (tests check the transfer's sizing).
    var bufferCapacity: Int { stream.bufferCapacity }
    func next(maxLength: Int) async throws -> [UInt8]? { try await stream.next(maxLength: maxLength) }
    func cancel() { stream.cancel() }
}
