public import PortcullisCore
import Synchronization

/// Delivers one ledger's events to the webhooks (docs/events.md): claims what is due, POSTs each claim beside
/// serving (at most `maxInFlight` at once, so memory stays bounded whatever the receivers do), runs each
/// attempt through a `DeliveryLifecycle`, and records the decision in the ledger.
///
/// The loop sleeps until the ledger's next due time, a wake-up (`wake()`: a commit, a finished attempt), or
/// `pollInterval` (for ledgers other processes write into). Nothing here runs on a request's path: a slow or
/// dead receiver only keeps its own deliveries waiting.
public final class EventDispatcher: Sendable {
    public struct Settings: Sendable {
        /// Attempts in flight at once, over all webhooks.
        public var maxInFlight: Int
        /// How long a claim is held before another dispatcher may take it (longer than an attempt).
        public var lease: Duration
        /// Look at the ledger at least this often even without wake-ups (nil: only on wake-ups and due times).
        public var pollInterval: Duration?
        /// The shortest sleep between two passes that found nothing to claim.
        public var minimumGap: Duration

        public init(
            maxInFlight: Int = 32, lease: Duration = .seconds(60), pollInterval: Duration? = nil,
            minimumGap: Duration = .milliseconds(20)
        ) {
            self.maxInFlight = maxInFlight
            self.lease = lease
            self.pollInterval = pollInterval
            self.minimumGap = minimumGap
        }
    }

    let ledger: any EventLedger
    let webhooks: [Webhook]
    private let labels: [ExactString: String]
    let transport: any WebhookTransport
    let signer: EventSigner?
    let policy: RetryPolicy
    let clock: any EventClock
    let metrics: EventMetrics
    let logger: Logger
    let settings: Settings
    /// Starts a trace per delivery attempt (a producer span; the webhook POST carries its `traceparent`).
    let traces: (any TraceRoots)?
    private let jitter: @Sendable () -> Double
    private let signal = WakeSignal()
    private let state = Mutex(LoopState())
    /// The ledger's pending count at the last pass (the `portcullis_events_pending` gauge sums these).
    private let pending = Atomic<Int>(0)

    private struct LoopState {
        var inFlight = 0
        var stopped = false
        var started = false
        /// The wake-up already scheduled on the clock, if any (so passes do not pile up timers).
        var scheduledWake: Timestamp?
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var ledgerFailing = false
        /// When the pending count was last read from the ledger (it is throttled: a count may scan the outbox).
        var pendingReadAt: Timestamp?
        var health: [ExactString: WebhookHealth] = [:]
    }

    /// A webhook's recent record. After `unhealthyAfter` failures in a row it is probed: one attempt at a
    /// time, the next one only after a backoff of its own, until an attempt succeeds. A dead or stalled
    /// receiver then costs one attempt per backoff, not one per waiting event, and the events wait unattempted.
    struct WebhookHealth {
        var consecutiveFailures = 0
        /// Failed probes since the webhook became unhealthy: the gate's backoff grows with them.
        var probeFailures = 0
        var gateUntil = Timestamp(nanosecondsSinceEpoch: 0)
        /// The sequence number of the probe in flight, if any.
        var probe: Int64?
    }

    /// Failures in a row after which a webhook is only probed.
    static let unhealthyAfter = 3

    /// The shortest time between two reads of the ledger's pending count.
    static let pendingRefreshInterval: Duration = .milliseconds(250)

    public init(
        ledger: any EventLedger, webhooks: [Webhook], transport: any WebhookTransport, signer: EventSigner?,
        policy: RetryPolicy = .standard, clock: any EventClock = SystemEventClock(), metrics: EventMetrics,
        logger: Logger, settings: Settings = Settings(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        traces: (any TraceRoots)? = nil
    ) {
        self.traces = traces
        self.ledger = ledger
        self.webhooks = webhooks
        var labels: [ExactString: String] = [:]
        for webhook in webhooks { labels[ExactString(webhook.url)] = webhook.label }
        self.labels = labels
        self.transport = transport
        self.signer = signer
        self.policy = policy
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.settings = settings
        self.jitter = jitter
    }

    /// Starts the delivery loop (once).
    public func start() {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        Task.detached(priority: .utility) { [self] in await self.run() }
    }

    /// Something may have become deliverable (a commit, a finished attempt): look again soon.
    public func wake() { signal.fire() }

    /// Ends the loop after its current pass; attempts in flight finish on their own.
    public func stop() {
        state.withLock { $0.stopped = true }
        signal.fire()
    }

    /// The ledger's pending count at the last pass.
    public var pendingEvents: Int { pending.load(ordering: .relaxed) }

    /// Attempts in flight now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Returns once no attempt is in flight (tests: no sleeping to wait for deliveries).
    public func quiesce() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.inFlight == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func run() async {
        while !state.withLock({ $0.stopped }) {
            await pass()
            await signal.wait()
        }
    }

    /// One pass: claim what is due into the free slots, start those attempts, refresh the pending count, and
    /// schedule the next wake-up. Returns how many attempts it started.
    @discardableResult
    public func pass() async -> Int {
        let now = clock.now()
        let free = settings.maxInFlight - state.withLock { $0.inFlight }
        let (healthy, probes, gates) = admission(now: now)
        var started = 0
        if free > 0 {
            var claims: [DeliveryClaim] = []
            do {
                if !healthy.isEmpty {
                    claims = try await ledger.claim(
                        webhooks: healthy, now: now, limit: free,
                        leaseUntil: now.adding(settings.lease))
                }
                for webhook in probes where claims.count < free {
                    let probe = try await ledger.claim(
                        webhooks: [webhook], now: now, limit: 1,
                        leaseUntil: now.adding(settings.lease))
                    if let first = probe.first { markProbe(webhook, sequence: first.sequence) }
                    claims += probe
                }
                noteLedger(failure: nil)
            } catch {
                noteLedger(failure: error)
                scheduleWake(at: now.adding(.seconds(1)), now: now)
                return 0
            }
            for claim in claims { launch(claim) }
            started = claims.count
            if started == free {
                // The slots are full or more may be due: the next finished attempt wakes the loop.
                if state.withLock({ $0.inFlight }) < settings.maxInFlight { signal.fire() }
                await refreshPending(now: now)
                return started
            }
        }
        await refreshPending(now: now)
        var next = gates.min()
        let open = healthy + probes
        if !open.isEmpty {
            do {
                if let due = try await ledger.nextDue(webhooks: open) { next = min(next ?? due, due) }
            } catch {
                next = now.adding(.seconds(1))
            }
        }
        if let poll = settings.pollInterval {
            let polled = now.adding(poll)
            next = min(next ?? polled, polled)
        }
        if let next { scheduleWake(at: max(next, now.adding(settings.minimumGap)), now: now) }
        return started
    }

    /// Which webhooks may be claimed for now: the healthy ones freely, an unhealthy one for a single probe
    /// once its gate opened and no probe is in flight; and when the closed gates open.
    private func admission(now: Timestamp) -> (healthy: [String], probes: [String], gates: [Timestamp]) {
        state.withLock { state in
            var healthy: [String] = [], probes: [String] = [], gates: [Timestamp] = []
            for webhook in webhooks {
                let health = state.health[ExactString(webhook.url)] ?? WebhookHealth()
                if health.consecutiveFailures < Self.unhealthyAfter {
                    healthy.append(webhook.url)
                } else if health.probe != nil {
                    continue
                } else if health.gateUntil <= now {
                    probes.append(webhook.url)
                } else {
                    gates.append(health.gateUntil)
                }
            }
            return (healthy, probes, gates)
        }
    }

    private func markProbe(_ webhook: String, sequence: Int64) {
        state.withLock { $0.health[ExactString(webhook), default: WebhookHealth()].probe = sequence }
    }

    /// Records how an attempt of `claim` ended, for `admission`: a success makes the webhook healthy; the
    /// `unhealthyAfter`-th failure in a row closes its gate for the policy's first delay, and each failed probe
    /// doubles the next one.
    private func record(_ outcome: DeliveryOutcome, claim: DeliveryClaim, now: Timestamp) {
        let key = ExactString(claim.webhook)
        state.withLock { state in
            var health = state.health[key] ?? WebhookHealth()
            let wasProbe = health.probe == claim.sequence
            if wasProbe { health.probe = nil }
            if case .acknowledged = outcome {
                state.health[key] = WebhookHealth()
                return
            }
            health.consecutiveFailures += 1
            if health.consecutiveFailures >= Self.unhealthyAfter {
                if wasProbe { health.probeFailures += 1 }
                let gate = now.adding(policy.delay(afterFailures: health.probeFailures + 1, jitter: jitter()))
                health.gateUntil = max(health.gateUntil, gate)
            }
            state.health[key] = health
        }
    }

    /// Reads the ledger's pending count, at most every `pendingRefreshInterval`; a skipped read schedules a
    /// pass for when it is allowed, so the gauge never stays stale once the loop goes idle.
    private func refreshPending(now: Timestamp) async {
        let last = state.withLock { state -> Timestamp? in
            if let last = state.pendingReadAt, now < last.adding(Self.pendingRefreshInterval) { return last }
            state.pendingReadAt = now
            return nil
        }
        if let last {
            scheduleWake(at: last.adding(Self.pendingRefreshInterval), now: now)
            return
        }
        if let count = try? await ledger.pendingCount() { pending.store(count, ordering: .relaxed) }
    }

    private func scheduleWake(at deadline: Timestamp, now: Timestamp) {
        let schedule = state.withLock { state -> Bool in
            if let existing = state.scheduledWake, existing <= deadline, existing > now { return false }
            state.scheduledWake = deadline
            return true
        }
        guard schedule else { return }
        clock.schedule(at: deadline) { [weak self] in
            guard let self else { return }
            self.state.withLock { state in
                if state.scheduledWake == deadline { state.scheduledWake = nil }
            }
            self.signal.fire()
        }
    }

    private func launch(_ claim: DeliveryClaim) {
        state.withLock { $0.inFlight += 1 }
        Task.detached(priority: .utility) { [self] in
            await self.deliver(claim)
            let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.inFlight -= 1
                guard state.inFlight == 0 else { return [] }
                defer { state.idleWaiters = [] }
                return state.idleWaiters
            }
            self.signal.fire()
            for waiter in waiters { waiter.resume() }
        }
    }

    /// One attempt of `claim`, start to ledger update.
    func deliver(_ claim: DeliveryClaim) async {
        var lifecycle = DeliveryLifecycle(claim: claim, policy: policy)
        let startedAt = clock.now()
        guard case .send(let timeout) = lifecycle.start(now: startedAt) else { return }
        let label = labels[ExactString(claim.webhook)] ?? claim.webhook
        let headers = CloudEventMessage.headers(for: claim.event, signer: signer, sentAt: startedAt)
        let trace = traces?.newTrace()
        var span = trace?.startRootSpan("event delivery", kind: .producer)
        span?.setAttribute("cloudevents.event_id", claim.event.id)
        span?.setAttribute("cloudevents.event_type", claim.event.kind.cloudEventType)
        span?.setAttribute("portcullis.webhook", label)
        span?.setAttribute("portcullis.delivery.attempt", claim.failedAttempts + 1)
        var request = WebhookRequest(
            url: claim.webhook, label: label, headers: headers, body: claim.event.body, timeout: timeout)
        request.trace = span?.trace ?? trace
        let outcome = await transport.post(request)
        if var finished = span {
            if case .acknowledged = outcome {} else { finished.setError("\(outcome)") }
            finished.end()
        }
        let finishedAt = clock.now()
        record(outcome, claim: claim, now: finishedAt)
        let action = lifecycle.finished(outcome, now: finishedAt, jitter: jitter())
        do {
            switch action {
            case .acknowledge(let latency):
                try await ledger.acknowledge(claim)
                metrics.delivered.labels(label).increment()
                metrics.deliverySeconds.observe(Double(latency.totalNanoseconds) / 1e9)
            case .retry(let time, let reason):
                metrics.failedAttempts.labels(label).increment()
                try await ledger.retry(claim, at: time, error: reason)
                logger.debug(
                    "event delivery failed; will retry",
                    fields(claim, label, lifecycle.failedAttempts) + [
                        ("error", .string(reason)), ("retry_at", .string(time.rfc3339Milliseconds)),
                    ])
            case .deadLetter(let reason):
                metrics.failedAttempts.labels(label).increment()
                metrics.deadLettered.increment()
                try await ledger.deadLetter(claim, error: reason)
                logger.error(
                    "event dead-lettered",
                    fields(claim, label, lifecycle.failedAttempts) + [
                        ("error", .string(reason))
                    ])
            case .send, .none:
                break
            }
        } catch {
            // The lease runs out and the delivery is claimed again: at least once, never lost.
            logger.warning(
                "event ledger update failed; the delivery will be retried when its lease ends",
                fields(claim, label, lifecycle.failedAttempts) + [("error", .string(error.description))])
        }
    }

    private func fields(_ claim: DeliveryClaim, _ label: String, _ attempts: Int) -> [(String, LogValue)] {
        [
            ("event_id", .string(claim.event.id)), ("type", .string(claim.event.kind.cloudEventType)),
            ("bucket", .string(claim.event.bucket)), ("object", .string(claim.event.name)),
            ("webhook", .string(label)), ("attempts", .int(Int64(attempts))),
        ]
    }

    /// Logs a failing ledger once when it starts failing and once when it recovers.
    private func noteLedger(failure: EventLedgerError?) {
        let changed = state.withLock { state -> Bool in
            let failing = failure != nil
            defer { state.ledgerFailing = failing }
            return state.ledgerFailing != failing
        }
        guard changed else { return }
        if let failure {
            logger.warning("event ledger unavailable; deliveries wait", [("error", .string(failure.description))])
        } else {
            logger.info("event ledger available again")
        }
    }
}
