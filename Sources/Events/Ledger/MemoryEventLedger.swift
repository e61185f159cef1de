public import PortcullisCore
import Synchronization

/// An in-memory `EventLedger` for buckets whose backend keeps no outbox (gs://, s3://): the events of changes
/// made through this process, delivered while it runs (docs/events.md). Bounded: beyond `capacity` events, or
/// `capacityBytes` of bodies, a new event is dropped, counted and logged — the upstream's own notifications
/// are the complete record. A dead-lettered delivery is forgotten after its log line (there is no outbox to
/// keep it in).
///
/// Events are fanned out to every webhook when published; per webhook, each object's events wait in a FIFO,
/// so only the head of a FIFO is ever claimable (commit order per object).
public final class MemoryEventLedger: EventLedger {
    public let capacity: Int
    public let capacityBytes: Int
    private let webhooks: [String]
    private let state: Mutex<State>
    private let onDrop: @Sendable (ChangeEvent, _ droppedSoFar: Int) -> Void

    private struct QueueKey: Hashable {
        let webhook: ExactString
        let bucket: ExactString
        let name: ExactString
    }

    private struct Delivery {
        var failedAttempts = 0
        let windowStart: Timestamp
        var due: Timestamp
        var leaseUntil = Timestamp(nanosecondsSinceEpoch: 0)
    }

    private struct Stored {
        let event: ChangeEvent
        /// Deliveries not yet acknowledged or dead-lettered.
        var remaining: Int
    }

    private struct State {
        var nextSequence: Int64 = 1
        var events: [Int64: Stored] = [:]
        var bytes = 0
        /// Per webhook and object: sequence numbers in commit order, each with its delivery state.
        var queues: [QueueKey: [(sequence: Int64, delivery: Delivery)]] = [:]
        var dropped = 0
    }

    public init(
        webhooks: [String], capacity: Int = 10_000, capacityBytes: Int = 64 << 20,
        onDrop: @escaping @Sendable (ChangeEvent, Int) -> Void = { _, _ in }
    ) {
        self.webhooks = webhooks
        self.capacity = capacity
        self.capacityBytes = capacityBytes
        self.onDrop = onDrop
        state = Mutex(State())
    }

    /// Appends `events` (in order); returns how many were dropped for lack of room.
    @discardableResult
    public func enqueue(_ events: [ChangeEvent], now: Timestamp) -> Int {
        var droppedEvents: [(ChangeEvent, Int)] = []
        state.withLock { state in
            for event in events {
                guard state.events.count < capacity, state.bytes + event.body.count <= capacityBytes else {
                    state.dropped += 1
                    droppedEvents.append((event, state.dropped))
                    continue
                }
                let sequence = state.nextSequence
                state.nextSequence += 1
                state.events[sequence] = Stored(event: event, remaining: webhooks.count)
                state.bytes += event.body.count
                for webhook in webhooks {
                    let key = QueueKey(
                        webhook: ExactString(webhook), bucket: ExactString(event.bucket),
                        name: ExactString(event.name))
                    state.queues[key, default: []].append((sequence, Delivery(windowStart: now, due: now)))
                }
            }
        }
        for (event, count) in droppedEvents { onDrop(event, count) }
        return droppedEvents.count
    }

    public func claim(
        webhooks: [String], now: Timestamp, limit: Int,
        leaseUntil: Timestamp
    ) async throws(EventLedgerError) -> [DeliveryClaim] {
        guard limit > 0 else { return [] }
        let wanted = Set(webhooks.map { ExactString($0) })
        return state.withLock { state in
            var ready: [(key: QueueKey, sequence: Int64)] = []
            for (key, queue) in state.queues where wanted.contains(key.webhook) {
                guard let head = queue.first, head.delivery.due <= now, head.delivery.leaseUntil <= now else {
                    continue
                }
                ready.append((key, head.sequence))
            }
            ready.sort { $0.sequence < $1.sequence }
            var claims: [DeliveryClaim] = []
            for (key, sequence) in ready.prefix(limit) {
                guard let stored = state.events[sequence] else { continue }
                state.queues[key]![0].delivery.leaseUntil = leaseUntil
                let delivery = state.queues[key]![0].delivery
                claims.append(
                    DeliveryClaim(
                        sequence: sequence, webhook: key.webhook.string, event: stored.event,
                        failedAttempts: delivery.failedAttempts, windowStart: delivery.windowStart))
            }
            return claims
        }
    }

    public func acknowledge(_ claim: DeliveryClaim) async throws(EventLedgerError) {
        finish(claim)
    }

    public func retry(_ claim: DeliveryClaim, at time: Timestamp, error: String) async throws(EventLedgerError) {
        state.withLock { state in
            let key = Self.key(claim)
            guard let head = state.queues[key]?.first, head.sequence == claim.sequence else { return }
            state.queues[key]![0].delivery.failedAttempts += 1
            state.queues[key]![0].delivery.due = time
            state.queues[key]![0].delivery.leaseUntil = Timestamp(nanosecondsSinceEpoch: 0)
        }
    }

    public func deadLetter(_ claim: DeliveryClaim, error: String) async throws(EventLedgerError) {
        finish(claim)
    }

    public func nextDue(webhooks: [String]) async throws(EventLedgerError) -> Timestamp? {
        let wanted = Set(webhooks.map { ExactString($0) })
        return state.withLock { state in
            var earliest: Timestamp?
            for (key, queue) in state.queues where wanted.contains(key.webhook) {
                guard let head = queue.first else { continue }
                let ready = max(head.delivery.due, head.delivery.leaseUntil)
                earliest = min(earliest ?? ready, ready)
            }
            return earliest
        }
    }

    public func pendingCount() async throws(EventLedgerError) -> Int {
        state.withLock { $0.events.count }
    }

    /// Events dropped for lack of room since start.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// Removes the claimed head delivery, and its event once no delivery of it remains.
    private func finish(_ claim: DeliveryClaim) {
        state.withLock { state in
            let key = Self.key(claim)
            guard let head = state.queues[key]?.first, head.sequence == claim.sequence else { return }
            state.queues[key]!.removeFirst()
            if state.queues[key]!.isEmpty { state.queues[key] = nil }
            guard var stored = state.events[claim.sequence] else { return }
            stored.remaining -= 1
            if stored.remaining <= 0 {
                state.events[claim.sequence] = nil
                state.bytes -= stored.event.body.count
            } else {
                state.events[claim.sequence] = stored
            }
        }
    }

    private static func key(_ claim: DeliveryClaim) -> QueueKey {
        QueueKey(
            webhook: ExactString(claim.webhook), bucket: ExactString(claim.event.bucket),
            name: ExactString(claim.event.name))
    }
}
