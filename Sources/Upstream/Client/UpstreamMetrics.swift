import PortcullisCore

/// The upstream metric families (docs/operations.md), resolved once per client.
struct UpstreamMetrics: Sendable {
    let requests: CounterFamily
    let duration: HistogramFamily
    let streamErrors: CounterFamily

    init(registry: MetricsRegistry, activeTransfers: @escaping @Sendable () -> Double) {
        requests = registry.counter(
            "portcullis_upstream_requests_total", help: "Upstream HTTP attempts by backend, operation and status.",
            labels: ["backend", "op", "status"])
        duration = registry.histogram(
            "portcullis_upstream_duration_seconds", help: "Upstream attempt duration, head to last body byte.",
            labels: ["backend", "op"], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60])
        streamErrors = registry.counter(
            "portcullis_upstream_stream_errors_total",
            help: "Upstream response bodies that ended abnormally after the head (truncated, timed out, cancelled).",
            labels: ["backend", "op", "reason"])
        registry.gauge(
            "portcullis_upstream_active_transfers", help: "Upstream transfers in progress.",
            sample: activeTransfers)
    }
}
