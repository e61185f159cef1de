public import PortcullisCore

/// The change-event metrics (docs/events.md), registered once per process. Webhook labels are `Webhook.label`
/// (no credentials, no query); there is one per configured webhook.
public final class EventMetrics: Sendable {
    let delivered: CounterFamily
    let failedAttempts: CounterFamily
    let deadLettered: Counter
    let dropped: Counter
    let deliverySeconds: Histogram

    /// Commit → acknowledgement, from milliseconds to the 24 h retry window.
    static let latencyBuckets: [Double] = [
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
        900, 3600, 21_600, 86_400,
    ]

    /// Registers the families in `registry`; `pending` is sampled at scrape time.
    public init(registry: MetricsRegistry, pending: @escaping @Sendable () -> Double) {
        registry.gauge(
            "portcullis_events_pending",
            help: "Change events with a delivery neither acknowledged nor dead-lettered.", sample: pending)
        delivered = registry.counter(
            "portcullis_events_delivered_total",
            help: "Change events acknowledged (2xx) by a webhook.", labels: ["webhook"])
        failedAttempts = registry.counter(
            "portcullis_events_failed_attempts_total",
            help: "Delivery attempts that failed (non-2xx status, connection error, timeout).",
            labels: ["webhook"])
        deadLettered = registry.counter(
            "portcullis_events_dead_lettered_total",
            help: "Deliveries given up after the retry window."
        ).labels()
        dropped = registry.counter(
            "portcullis_events_dropped_total",
            help: "Change events of upstream (gs://, s3://) buckets dropped because the in-memory queue was full."
        ).labels()
        deliverySeconds = registry.histogram(
            "portcullis_events_delivery_seconds",
            help: "Time from commit to acknowledgement.",
            buckets: Self.latencyBuckets
        ).labels()
    }
}
