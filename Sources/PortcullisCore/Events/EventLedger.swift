/// Where change events wait for delivery, with the state of each (event, webhook) delivery: the seam between
/// the stores that keep events (the embedded backend's SQLite outbox, an in-memory queue for upstream buckets)
/// and the dispatcher that delivers them (docs/events.md).
///
/// Contract shared by every ledger:
/// - Every event goes to every webhook the dispatcher names; deliveries to different webhooks progress
///   independently.
/// - Per object and webhook, deliveries happen in commit order: a delivery is claimable only when every
///   earlier event of the same object (bucket and name, compared by bytes) was acknowledged or dead-lettered
///   for that webhook.
/// - A claim is a lease: until `leaseUntil` nobody else (another dispatcher, another process sharing the
///   ledger) claims the same delivery. A claim whose holder vanished becomes claimable again when its lease
///   ends, so a delivery may happen more than once (at least once), never zero times.
/// - Acknowledged deliveries are forgotten; an event is forgotten once every delivery of it is acknowledged.
///   Dead-lettered deliveries are kept until redelivered or removed by an operator.
public protocol EventLedger: Sendable {
    /// Claims up to `limit` deliveries due at `now` (never attempted, or retry time reached) to `webhooks`, in
    /// commit order, and leases them until `leaseUntil`.
    func claim(
        webhooks: [String], now: Timestamp, limit: Int,
        leaseUntil: Timestamp
    ) async throws(EventLedgerError) -> [DeliveryClaim]

    /// The receiver acknowledged `claim`: the delivery is done.
    func acknowledge(_ claim: DeliveryClaim) async throws(EventLedgerError)

    /// The attempt failed: release the lease, count the attempt, and make the delivery due again at `time`.
    func retry(_ claim: DeliveryClaim, at time: Timestamp, error: String) async throws(EventLedgerError)

    /// Give up on `claim`: keep it as dead-lettered (it no longer holds back later events of its object).
    func deadLetter(_ claim: DeliveryClaim, error: String) async throws(EventLedgerError)

    /// When the next delivery to `webhooks` becomes due or its lease ends (nil: nothing waiting), so the
    /// dispatcher can sleep until then. May be earlier than the truth, never later.
    func nextDue(webhooks: [String]) async throws(EventLedgerError) -> Timestamp?

    /// Events with at least one delivery neither acknowledged nor dead-lettered.
    func pendingCount() async throws(EventLedgerError) -> Int
}

/// One delivery (an event to one webhook), claimed for one attempt.
public struct DeliveryClaim: Sendable, Equatable {
    /// The event's position in the ledger (commit order).
    public var sequence: Int64
    public var webhook: String
    public var event: ChangeEvent
    /// Attempts made before this one (0 for the first).
    public var failedAttempts: Int
    /// When this delivery's retry window opened: when the event was handed to the webhook, or when an
    /// operator redelivered it.
    public var windowStart: Timestamp

    public init(sequence: Int64, webhook: String, event: ChangeEvent, failedAttempts: Int, windowStart: Timestamp) {
        self.sequence = sequence
        self.webhook = webhook
        self.event = event
        self.failedAttempts = failedAttempts
        self.windowStart = windowStart
    }
}

/// Why a ledger operation failed (the store is unavailable or broken); the dispatcher logs it and tries
/// again later, the events stay where they are.
public struct EventLedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
