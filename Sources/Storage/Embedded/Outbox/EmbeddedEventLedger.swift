import Crypto
public import PortcullisCore

/// The embedded directory's event outbox as an `EventLedger`: the events its backends wrote in their commit
/// transactions, delivered by whichever processes have the directory open.
///
/// One per directory per process (owned by the shared store). Every mutation is a short write transaction on
/// the store's writer lane; claims lease their rows under this process's random owner id, so processes
/// sharing the directory never claim the same delivery while its lease runs, and a retry or dead-letter from
/// a holder whose lease was taken over changes nothing.
public final class EmbeddedEventLedger: EventLedger {
    private let writer: DatabaseLane
    private let readerLane: DatabaseLane
    /// This process's lease owner id.
    let owner = SecureRandom.uuidString()

    init(writer: DatabaseLane, reader: DatabaseLane) {
        self.writer = writer
        self.readerLane = reader
    }

    public func claim(
        webhooks: [String], now: Timestamp, limit: Int,
        leaseUntil: Timestamp
    ) async throws(EventLedgerError) -> [DeliveryClaim] {
        guard limit > 0, !webhooks.isEmpty else { return [] }
        let owner = self.owner
        return try await write { (db) throws(StorageError) -> [DeliveryClaim] in
            try EventOutboxSQL.fanOut(db, webhooks: webhooks, now: now)
            var claims: [DeliveryClaim] = []
            for webhook in webhooks where claims.count < limit {
                for row in try EventOutboxSQL.due(db, webhook: webhook, now: now, limit: limit - claims.count) {
                    guard let event = try EventOutboxSQL.event(db, seq: row.seq) else { continue }
                    try EventOutboxSQL.lease(db, webhook: webhook, seq: row.seq, owner: owner, until: leaseUntil)
                    claims.append(
                        DeliveryClaim(
                            sequence: row.seq, webhook: webhook, event: event,
                            failedAttempts: row.attempts,
                            windowStart: Timestamp(nanosecondsSinceEpoch: row.since)))
                }
            }
            return claims
        }
    }

    public func acknowledge(_ claim: DeliveryClaim) async throws(EventLedgerError) {
        try await write { (db) throws(StorageError) in
            try EventOutboxSQL.acknowledge(db, webhook: claim.webhook, seq: claim.sequence)
        }
    }

    public func retry(_ claim: DeliveryClaim, at time: Timestamp, error: String) async throws(EventLedgerError) {
        let owner = self.owner
        try await write { (db) throws(StorageError) in
            try EventOutboxSQL.retry(
                db, webhook: claim.webhook, seq: claim.sequence, owner: owner, due: time,
                error: error)
        }
    }

    public func deadLetter(_ claim: DeliveryClaim, error: String) async throws(EventLedgerError) {
        let owner = self.owner
        try await write { (db) throws(StorageError) in
            try EventOutboxSQL.deadLetter(db, webhook: claim.webhook, seq: claim.sequence, owner: owner, error: error)
        }
    }

    public func nextDue(webhooks: [String]) async throws(EventLedgerError) -> Timestamp? {
        try await read { (db) throws(StorageError) -> Timestamp? in
            if try EventOutboxSQL.hasUnfanned(db) { return .now() }
            var earliest: Int64?
            for webhook in webhooks {
                if let due = try EventOutboxSQL.nextDue(db, webhook: webhook) { earliest = min(earliest ?? due, due) }
            }
            return earliest.map { Timestamp(nanosecondsSinceEpoch: $0) }
        }
    }

    public func pendingCount() async throws(EventLedgerError) -> Int {
        try await read { (db) throws(StorageError) -> Int in try EventOutboxSQL.pendingCount(db) }
    }

    private func write<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteDatabase) throws(StorageError) -> T
    ) async throws(EventLedgerError) -> T {
        do {
            return try await writer.run { (db) throws(StorageError) -> T in
                try db.transaction(immediate: true) { () throws(StorageError) -> T in try body(db) }
            }
        } catch {
            throw EventLedgerError("event outbox: \(error)")
        }
    }

    private func read<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteDatabase) throws(StorageError) -> T
    ) async throws(EventLedgerError) -> T {
        do {
            return try await readerLane.run { (db) throws(StorageError) -> T in
                try db.transaction(immediate: false) { () throws(StorageError) -> T in try body(db) }
            }
        } catch {
            throw EventLedgerError("event outbox: \(error)")
        }
    }
}
