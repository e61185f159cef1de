public import PortcullisCore
import Synchronization
public import Upstream

/// Batches finished spans and sends them to an OTLP/HTTP collector, off the request path.
///
/// `record` (called on request paths) only appends to a bounded queue under a lock: when the queue holds
/// `capacity` spans the new one is dropped and counted (`portcullis_trace_spans_dropped_total{reason="queue_full"}`),
/// so a slow or dead collector costs memory up to `capacity` spans and nothing else. A background task sends a
/// batch of at most `maxBatch` spans every `interval`, or as soon as `maxBatch` spans wait, as one
/// `POST {endpoint}/v1/traces` (`application/x-protobuf`) through the process's `UpstreamClient` — one attempt,
/// no retry: a failed batch is dropped and counted (`reason="export_failed"`), because traces are a sample
/// and an old batch is worth less than the next one.
public final class SpanExporter: SpanRecorder {
    public struct Settings: Sendable {
        /// The collector's base URL (`--otlp-endpoint`); spans go to `{endpoint}/v1/traces`.
        public var endpoint: String
        public var capacity: Int
        public var maxBatch: Int
        public var interval: Duration
        /// Per-export timeouts (connect, head, idle), in seconds.
        public var timeoutSeconds: Double

        public init(
            endpoint: String, capacity: Int = 2048, maxBatch: Int = 512, interval: Duration = .seconds(1),
            timeoutSeconds: Double = 10
        ) {
            self.endpoint = endpoint
            self.capacity = capacity
            self.maxBatch = maxBatch
            self.interval = interval
            self.timeoutSeconds = timeoutSeconds
        }

        /// The URL export requests go to: the endpoint with `/v1/traces` (a trailing `/` on it is dropped).
        public var tracesURL: String {
            var base = endpoint
            while base.hasSuffix("/") { base.removeLast() }
            return base + "/v1/traces"
        }
    }

    private struct State {
        var queue: [SpanData] = []
        /// The exporter task waiting for work, resumed early when a full batch is queued.
        var waiter: CheckedContinuation<Void, Never>?
        var stopped = false
    }

    public let settings: Settings
    private let encoding: OTLPEncoding
    private let client: UpstreamClient
    private let state = Mutex(State())
    private let droppedFull: Counter
    private let droppedFailed: Counter
    private let exported: Counter
    private let logger: Logger

    public init(
        settings: Settings, encoding: OTLPEncoding, client: UpstreamClient, metrics: MetricsRegistry,
        logger: Logger = .disabled
    ) {
        self.settings = settings
        self.encoding = encoding
        self.client = client
        self.logger = logger
        let dropped = metrics.counter(
            "portcullis_trace_spans_dropped_total",
            help: "Spans not exported: the export queue was full, or the collector refused or missed the batch.",
            labels: ["reason"])
        droppedFull = dropped.labels("queue_full")
        droppedFailed = dropped.labels("export_failed")
        exported = metrics.counter(
            "portcullis_trace_spans_exported_total", help: "Spans the OTLP collector accepted (2xx)."
        ).labels()
    }

    public func record(_ span: SpanData) {
        let (queued, wake) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard state.queue.count < settings.capacity else { return (false, nil) }
            state.queue.append(span)
            guard state.queue.count >= settings.maxBatch, let waiter = state.waiter else { return (true, nil) }
            state.waiter = nil
            return (true, waiter)
        }
        if !queued { droppedFull.increment() }
        wake?.resume()
    }

    /// Starts the background export loop (once).
    public func start() {
        Task.detached { [self] in await run() }
    }

    /// Stops the loop after sending what is queued (at shutdown).
    public func shutdown() async {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.stopped = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
        while let batch = takeBatch() { await send(batch) }
    }

    /// Spans waiting (tests).
    public var queuedCount: Int { state.withLock { $0.queue.count } }

    private func run() async {
        while !state.withLock({ $0.stopped }) {
            await waitForWork()
            while let batch = takeBatch() { await send(batch) }
        }
    }

    /// Returns after `interval`, or earlier when a full batch is queued or the exporter stops.
    private func waitForWork() async {
        let interval = settings.interval
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let immediate = state.withLock { state -> Bool in
                if state.stopped || state.queue.count >= settings.maxBatch { return true }
                state.waiter = continuation
                return false
            }
            if immediate {
                continuation.resume()
                return
            }
            Task { [self] in
                try? await Task.sleep(for: interval)
                let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }

    private func takeBatch() -> [SpanData]? {
        state.withLock { state -> [SpanData]? in
            guard !state.queue.isEmpty else { return nil }
            let count = min(state.queue.count, settings.maxBatch)
            let batch = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            return batch
        }
    }

    private func send(_ batch: [SpanData]) async {
        let t = settings.timeoutSeconds
        let request = UpstreamRequest(
            method: "POST", url: settings.tracesURL, headers: [("Content-Type", "application/x-protobuf")],
            body: .bytes(encoding.exportRequest(batch)),
            timeouts: UpstreamTimeouts(connect: t, firstByte: t, idle: t), idempotent: false,
            backend: "otlp", operation: "export")
        do {
            let response = try await client.send(request)
            response.body.cancel()
            if (200..<300).contains(response.status) {
                exported.increment(by: UInt64(batch.count))
                return
            }
            logger.warning(
                "OTLP collector refused a span batch",
                [("status", .int(Int64(response.status))), ("spans", .int(Int64(batch.count)))])
        } catch {
            logger.warning(
                "OTLP export failed", [("error", .string(error.description)), ("spans", .int(Int64(batch.count)))])
        }
        droppedFailed.increment(by: UInt64(batch.count))
    }
}
