public import PortcullisCore
import Synchronization

/// The HTTP metrics of docs/operations.md, labelled by route template (never raw paths).
///
/// Per-request cost on an event loop (`shard` given): one lookup in that loop's own cache of children for
/// (route, method, status), then increments of the loop's own cells and one observation into the loop's own
/// histogram part — no shared atomic, no shared lock; a scrape sums the loops. Off a loop (`shard` nil) the
/// same goes through a lock-protected cache and the shared atomics. Method labels are folded to the known
/// verbs plus `OTHER`, so a client cannot grow the label space.
public final class HTTPMetrics: Sendable {
    public let registry: MetricsRegistry
    private let requests: CounterFamily
    private let duration: HistogramFamily
    private let responseBytes: CounterFamily
    private let requestBytes: CounterFamily
    /// Requests being handled right now.
    public let inflight: Gauge
    private let cache = Mutex<[Key: Children]>([:])
    /// One cache per loop shard, each touched only by its loop's thread.
    private let loopCaches: [LoopCache] = (0..<LoopShard.capacity).map { _ in LoopCache() }

    /// Confined to one loop's thread (the `LoopShard` contract), hence `@unchecked Sendable`.
    private final class LoopCache: @unchecked Sendable {
        var children: [Key: Children] = [:]
    }

    /// Latency buckets in seconds: 1 ms … 60 s.
    public static let durationBuckets: [Double] = [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
    ]

    private struct Key: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    private struct Children {
        let requests: Counter
        let duration: Histogram
        let responseBytes: Counter
        let requestBytes: Counter
    }

    public init(registry: MetricsRegistry) {
        self.registry = registry
        requests = registry.counter(
            "portcullis_http_requests_total", help: "HTTP requests answered.",
            labels: ["route", "method", "status"])
        duration = registry.histogram(
            "portcullis_http_request_duration_seconds",
            help: "Time from request head to last response byte.", labels: ["route"],
            buckets: Self.durationBuckets)
        responseBytes = registry.counter(
            "portcullis_http_response_bytes_total", help: "Response bytes written.",
            labels: ["route"])
        requestBytes = registry.counter(
            "portcullis_http_request_bytes_total", help: "Request body bytes read.",
            labels: ["route"])
        inflight = registry.gauge("portcullis_http_inflight_requests", help: "Requests being handled.").labels([])
    }

    /// Counts one finished exchange. `status` is the logged status (499 for a client that went away).
    /// `shard`: the loop the caller runs on (`ExchangeLoop.currentShard`), nil elsewhere.
    public func record(
        route: String, method: HTTPMethodLabel, status: Int, bytesIn: Int64, bytesOut: Int64,
        durationNanos: UInt64, on shard: LoopShard? = nil
    ) {
        let children: Children
        if let shard {
            let loopCache = loopCaches[shard.index]
            let key = Key(route: route, method: method.rawValue, status: status)
            if let hit = loopCache.children[key] {
                children = hit
            } else {
                children = self.children(route: route, method: method.rawValue, status: status)
                loopCache.children[key] = children
            }
        } else {
            children = self.children(route: route, method: method.rawValue, status: status)
        }
        children.requests.increment(on: shard)
        children.duration.observe(Double(durationNanos) / 1e9, on: shard)
        if bytesOut > 0 { children.responseBytes.increment(by: UInt64(bytesOut), on: shard) }
        if bytesIn > 0 { children.requestBytes.increment(by: UInt64(bytesIn), on: shard) }
    }

    /// A pre-resolved request counter for a fixed route, method and status (the `/healthz` fast path).
    public func requestCounter(route: String, method: HTTPMethodLabel, status: Int) -> Counter {
        children(route: route, method: method.rawValue, status: status).requests
    }

    /// Exposes `portcullis_open_connections`, sampled at scrape time (e.g. `HTTPServer.openConnections`).
    public func trackOpenConnections(_ sample: @escaping @Sendable () -> Int) {
        registry.gauge("portcullis_open_connections", help: "Open client connections.") { Double(sample()) }
    }

    private func children(route: String, method: String, status: Int) -> Children {
        let key = Key(route: route, method: method, status: status)
        return cache.withLock { cache in
            if let hit = cache[key] { return hit }
            let made = Children(
                requests: requests.labels(route, method, String(status)),
                duration: duration.labels(route),
                responseBytes: responseBytes.labels(route),
                requestBytes: requestBytes.labels(route))
            cache[key] = made
            return made
        }
    }
}

/// An HTTP method as a metric label: the standard verbs, or `OTHER`.
public struct HTTPMethodLabel: Sendable, Equatable {
    public let rawValue: String

    private static let known: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    public init(_ method: String) {
        rawValue = Self.known.contains(method) ? method : "OTHER"
    }
}
