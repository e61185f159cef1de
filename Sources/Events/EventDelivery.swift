import CloudStorageWire
public import PortcullisCore
import Synchronization

/// Change-event delivery for one process (docs/events.md): one dispatcher per embedded outbox (events the
/// backends recorded in their commit transactions) and one over an in-memory ledger (events of upstream
/// buckets, published by the service after their commits). It is the service's `ChangeEventSink`.
public final class EventDelivery: ChangeEventSink {
    public let webhooks: [Webhook]
    let memory: MemoryEventLedger
    let memoryDispatcher: EventDispatcher
    let outboxDispatchers: [EventDispatcher]
    let clock: any EventClock
    /// Where the bodies' `selfLink` and `mediaLink` point (the gateway's public base URL); nil omits them.
    /// Set once the listener is bound (its port may be chosen by the kernel), before any request is served.
    private let links = Mutex<ObjectResource.Links?>(nil)

    /// How often an outbox is looked at without a wake-up: other processes sharing the directory commit
    /// events this process is not told about.
    public static let outboxPollInterval: Duration = .seconds(1)

    public init(
        webhooks: [Webhook], outboxes: [any EventLedger], transport: any WebhookTransport,
        signer: EventSigner?, registry: MetricsRegistry, logger: Logger, policy: RetryPolicy = .standard,
        clock: any EventClock = SystemEventClock(), memoryCapacity: Int = 10_000,
        traces: (any TraceRoots)? = nil
    ) {
        self.webhooks = webhooks
        self.clock = clock
        let box = DispatcherBox()
        let metrics = EventMetrics(registry: registry) { Double(box.pending()) }
        memory = MemoryEventLedger(webhooks: webhooks.map(\.url), capacity: memoryCapacity) { event, dropped in
            metrics.dropped.increment()
            // Logged for the first drop and then every 1000th, so a flood does not flood the log too.
            if dropped == 1 || dropped % 1000 == 0 {
                logger.warning(
                    "event queue full; change event dropped (the upstream's own notifications are the complete record)",
                    [
                        ("type", .string(event.kind.cloudEventType)), ("bucket", .string(event.bucket)),
                        ("object", .string(event.name)), ("dropped_total", .int(Int64(dropped))),
                    ])
            }
        }
        memoryDispatcher = EventDispatcher(
            ledger: memory, webhooks: webhooks, transport: transport, signer: signer,
            policy: policy, clock: clock, metrics: metrics, logger: logger, traces: traces)
        outboxDispatchers = outboxes.map {
            EventDispatcher(
                ledger: $0, webhooks: webhooks, transport: transport, signer: signer, policy: policy,
                clock: clock, metrics: metrics, logger: logger,
                settings: EventDispatcher.Settings(pollInterval: Self.outboxPollInterval), traces: traces)
        }
        box.dispatchers = [memoryDispatcher] + outboxDispatchers
    }

    /// Starts every dispatcher (outboxes resume what earlier runs left).
    public func start() {
        memoryDispatcher.start()
        for dispatcher in outboxDispatchers { dispatcher.start() }
    }

    public func stop() {
        memoryDispatcher.stop()
        for dispatcher in outboxDispatchers { dispatcher.stop() }
    }

    /// The base URL the event bodies' links point under (no trailing slash), e.g. `--public-url`.
    public func setLinkBase(_ base: String) {
        links.withLock { $0 = ObjectResource.Links(base: base) }
    }

    /// Renders a change as Cloud Storage's object event (`ChangeEvent.cloudStorage`).
    public func event(_ kind: ChangeKind, of object: ObjectMetadata, at time: Timestamp) -> ChangeEvent {
        .cloudStorage(kind, of: object, at: time, links: links.withLock { $0 })
    }

    public func publish(_ events: [ChangeEvent]) {
        guard !events.isEmpty else { return }
        memory.enqueue(events, now: clock.now())
        memoryDispatcher.wake()
    }

    public func recorded() {
        for dispatcher in outboxDispatchers { dispatcher.wake() }
    }
}

/// Lets the pending gauge's closure reach the dispatchers built after the metrics.
private final class DispatcherBox: @unchecked Sendable {
    /// Written once in `EventDelivery.init` before the box is shared with a scrape.
    var dispatchers: [EventDispatcher] = []
    func pending() -> Int { dispatchers.reduce(0) { $0 + $1.pendingEvents } }
}
