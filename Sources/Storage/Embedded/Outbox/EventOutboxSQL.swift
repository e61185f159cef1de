public import PortcullisCore

/// The SQL of the embedded event outbox (docs/events.md): events written in the commit transaction of their
/// change, and the delivery state of each (event, webhook) pair. Stateless, like `ObjectIndex`; every function
/// runs on the connection it is given, inside the caller's transaction.
///
/// ```
/// event_outbox      one row per committed event, in commit order (seq); fanned_out once its deliveries exist
/// event_deliveries  one row per (webhook, event) not yet acknowledged: attempts, when it is due, who holds it
///                   (lease), and whether it was dead-lettered
/// ```
/// Names are BLOBs of their UTF-8 bytes (as in `objects`), so "the same object" is a byte comparison.
enum EventOutboxSQL {
    static let schema = """
        CREATE TABLE IF NOT EXISTS event_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            bucket TEXT NOT NULL,
            name BLOB NOT NULL,
            time INTEGER NOT NULL,
            body BLOB NOT NULL,
            fanned_out INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX IF NOT EXISTS event_outbox_unfanned ON event_outbox (seq) WHERE fanned_out = 0;
        CREATE INDEX IF NOT EXISTS event_outbox_by_id ON event_outbox (id);
        CREATE TABLE IF NOT EXISTS event_deliveries (
            webhook TEXT NOT NULL,
            seq INTEGER NOT NULL,
            bucket TEXT NOT NULL,
            name BLOB NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            since INTEGER NOT NULL,
            due INTEGER NOT NULL,
            lease_owner TEXT,
            lease_until INTEGER NOT NULL DEFAULT 0,
            dead INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            PRIMARY KEY (webhook, seq)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS event_deliveries_by_object ON event_deliveries (webhook, bucket, name, seq) WHERE dead = 0;
        CREATE INDEX IF NOT EXISTS event_deliveries_due ON event_deliveries (webhook, due) WHERE dead = 0;
        CREATE INDEX IF NOT EXISTS event_deliveries_by_seq ON event_deliveries (seq);
        """

    /// Appends `event` to the outbox (in the caller's commit transaction).
    static func insert(_ db: SQLiteDatabase, _ event: ChangeEvent) throws(StorageError) {
        let statement = try db.statement(
            """
            INSERT INTO event_outbox (id, kind, bucket, name, time, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """)
        try statement.bind(1, event.id)
        try statement.bind(2, event.kind.rawValue)
        try statement.bind(3, event.bucket)
        try statement.bind(4, blob: Array(event.name.utf8))
        try statement.bind(5, event.time.nanosecondsSinceEpoch)
        try statement.bind(6, blob: event.body)
        try statement.run()
    }

    /// Creates the deliveries of every event not fanned out yet, one per webhook, due now.
    static func fanOut(_ db: SQLiteDatabase, webhooks: [String], now: Timestamp) throws(StorageError) {
        let probe = try db.statement("SELECT 1 FROM event_outbox WHERE fanned_out = 0 LIMIT 1")
        guard try probe.step() else { return }
        for webhook in webhooks {
            let statement = try db.statement(
                """
                INSERT OR IGNORE INTO event_deliveries (webhook, seq, bucket, name, since, due)
                SELECT ?1, seq, bucket, name, ?2, ?2 FROM event_outbox WHERE fanned_out = 0
                """)
            try statement.bind(1, webhook)
            try statement.bind(2, now.nanosecondsSinceEpoch)
            try statement.run()
        }
        try db.statement("UPDATE event_outbox SET fanned_out = 1 WHERE fanned_out = 0").run()
    }

    /// Deliveries to `webhook` that are due, not leased, and first of their object among live deliveries.
    static func due(
        _ db: SQLiteDatabase, webhook: String, now: Timestamp,
        limit: Int
    ) throws(StorageError) -> [(seq: Int64, attempts: Int, since: Int64)] {
        let statement = try db.statement(
            """
            SELECT d.seq, d.attempts, d.since FROM event_deliveries d
            WHERE d.webhook = ?1 AND d.dead = 0 AND d.due <= ?2 AND d.lease_until <= ?2
              AND NOT EXISTS (SELECT 1 FROM event_deliveries e
                              WHERE e.webhook = d.webhook AND e.bucket = d.bucket AND e.name = d.name
                                AND e.dead = 0 AND e.seq < d.seq)
            ORDER BY d.due, d.seq LIMIT ?3
            """)
        try statement.bind(1, webhook)
        try statement.bind(2, now.nanosecondsSinceEpoch)
        try statement.bind(3, Int64(limit))
        var rows: [(Int64, Int, Int64)] = []
        while try statement.step() { rows.append((statement.int64(0), Int(statement.int64(1)), statement.int64(2))) }
        return rows
    }

    static func lease(
        _ db: SQLiteDatabase, webhook: String, seq: Int64, owner: String,
        until: Timestamp
    ) throws(StorageError) {
        let statement = try db.statement(
            """
            UPDATE event_deliveries SET lease_owner = ?3, lease_until = ?4 WHERE webhook = ?1 AND seq = ?2
            """)
        try statement.bind(1, webhook)
        try statement.bind(2, seq)
        try statement.bind(3, owner)
        try statement.bind(4, until.nanosecondsSinceEpoch)
        try statement.run()
    }

    static func event(_ db: SQLiteDatabase, seq: Int64) throws(StorageError) -> ChangeEvent? {
        let statement = try db.statement("SELECT id, kind, bucket, name, time, body FROM event_outbox WHERE seq = ?1")
        try statement.bind(1, seq)
        guard try statement.step() else { return nil }
        return ChangeEvent(
            id: statement.text(0) ?? "", kind: ChangeKind(rawValue: statement.text(1) ?? "") ?? .finalized,
            bucket: statement.text(2) ?? "", name: String(decoding: statement.blob(3), as: UTF8.self),
            time: Timestamp(nanosecondsSinceEpoch: statement.int64(4)), body: statement.blob(5))
    }

    /// Removes an acknowledged delivery, and its event when no delivery of it is left.
    static func acknowledge(_ db: SQLiteDatabase, webhook: String, seq: Int64) throws(StorageError) {
        let remove = try db.statement("DELETE FROM event_deliveries WHERE webhook = ?1 AND seq = ?2")
        try remove.bind(1, webhook)
        try remove.bind(2, seq)
        try remove.run()
        let orphan = try db.statement(
            """
            DELETE FROM event_outbox WHERE seq = ?1 AND fanned_out = 1
              AND NOT EXISTS (SELECT 1 FROM event_deliveries WHERE seq = ?1)
            """)
        try orphan.bind(1, seq)
        try orphan.run()
    }

    /// Releases a failed attempt held by `owner`: one more attempt counted, due again at `due`.
    static func retry(
        _ db: SQLiteDatabase, webhook: String, seq: Int64, owner: String, due: Timestamp,
        error: String
    ) throws(StorageError) {
        let statement = try db.statement(
            """
            UPDATE event_deliveries SET attempts = attempts + 1, due = ?4, lease_owner = NULL, lease_until = 0,
                last_error = ?5
            WHERE webhook = ?1 AND seq = ?2 AND lease_owner = ?3
            """)
        try statement.bind(1, webhook)
        try statement.bind(2, seq)
        try statement.bind(3, owner)
        try statement.bind(4, due.nanosecondsSinceEpoch)
        try statement.bind(5, error)
        try statement.run()
    }

    static func deadLetter(
        _ db: SQLiteDatabase, webhook: String, seq: Int64, owner: String,
        error: String
    ) throws(StorageError) {
        let statement = try db.statement(
            """
            UPDATE event_deliveries SET attempts = attempts + 1, dead = 1, lease_owner = NULL, lease_until = 0,
                last_error = ?4
            WHERE webhook = ?1 AND seq = ?2 AND lease_owner = ?3
            """)
        try statement.bind(1, webhook)
        try statement.bind(2, seq)
        try statement.bind(3, owner)
        try statement.bind(4, error)
        try statement.run()
    }

    /// The earliest moment a first-of-its-object delivery to `webhook` is due and unleased.
    static func nextDue(_ db: SQLiteDatabase, webhook: String) throws(StorageError) -> Int64? {
        let statement = try db.statement(
            """
            SELECT MIN(MAX(d.due, d.lease_until)) FROM event_deliveries d
            WHERE d.webhook = ?1 AND d.dead = 0
              AND NOT EXISTS (SELECT 1 FROM event_deliveries e
                              WHERE e.webhook = d.webhook AND e.bucket = d.bucket AND e.name = d.name
                                AND e.dead = 0 AND e.seq < d.seq)
            """)
        try statement.bind(1, webhook)
        guard try statement.step() else { return nil }
        return statement.optionalInt64(0)
    }

    /// Whether events wait to be fanned out (they are due as soon as a dispatcher claims).
    static func hasUnfanned(_ db: SQLiteDatabase) throws(StorageError) -> Bool {
        try db.statement("SELECT 1 FROM event_outbox WHERE fanned_out = 0 LIMIT 1").step()
    }

    /// Events not fanned out yet, or with a live (not dead-lettered) delivery.
    static func pendingCount(_ db: SQLiteDatabase) throws(StorageError) -> Int {
        let statement = try db.statement(
            """
            SELECT COUNT(*) FROM event_outbox o WHERE o.fanned_out = 0
               OR EXISTS (SELECT 1 FROM event_deliveries d WHERE d.seq = o.seq AND d.dead = 0)
            """)
        guard try statement.step() else { return 0 }
        return Int(statement.int64(0))
    }

    /// Every lease ends and every live delivery is due now: run by a process that opened the directory alone,
    /// so nothing can hold a lease any more (a killed process's leases would otherwise delay its events).
    static func releaseLeases(_ db: SQLiteDatabase, now: Timestamp) throws(StorageError) {
        let statement = try db.statement(
            """
            UPDATE event_deliveries SET lease_owner = NULL, lease_until = 0, due = MIN(due, ?1) WHERE dead = 0
            """)
        try statement.bind(1, now.nanosecondsSinceEpoch)
        try statement.run()
    }
}

// MARK: - Operations (`portcullis events list|redeliver`)

extension EventOutboxSQL {
    /// Every event with its deliveries (one entry per delivery; an event not fanned out yet has one entry with
    /// no webhook), in commit order; `deadOnly` keeps dead-lettered deliveries only.
    static func list(_ db: SQLiteDatabase, deadOnly: Bool, limit: Int) throws(StorageError) -> [OutboxEntry] {
        let statement = try db.statement(
            """
            SELECT o.seq, o.id, o.kind, o.bucket, o.name, o.time, d.webhook, d.attempts, d.due, d.dead, d.last_error
            FROM event_outbox o LEFT JOIN event_deliveries d ON d.seq = o.seq
            WHERE (?1 = 0 AND (o.fanned_out = 0 OR d.seq IS NOT NULL)) OR d.dead = 1
            ORDER BY o.seq, d.webhook LIMIT ?2
            """)
        try statement.bind(1, deadOnly ? 1 : 0)
        try statement.bind(2, Int64(limit))
        var entries: [OutboxEntry] = []
        while try statement.step() {
            entries.append(
                OutboxEntry(
                    sequence: statement.int64(0), id: statement.text(1) ?? "", kind: statement.text(2) ?? "",
                    bucket: statement.text(3) ?? "", name: String(decoding: statement.blob(4), as: UTF8.self),
                    time: Timestamp(nanosecondsSinceEpoch: statement.int64(5)), webhook: statement.text(6),
                    attempts: Int(statement.optionalInt64(7) ?? 0),
                    due: statement.optionalInt64(8).map { Timestamp(nanosecondsSinceEpoch: $0) },
                    deadLettered: statement.optionalInt64(9) == 1, lastError: statement.text(10)))
        }
        return entries
    }

    /// Makes the dead-lettered deliveries of event `id` live again (attempts reset, due now, a new retry
    /// window). Returns how many deliveries it revived.
    static func redeliver(_ db: SQLiteDatabase, id: String, now: Timestamp) throws(StorageError) -> Int {
        let statement = try db.statement(
            """
            UPDATE event_deliveries SET dead = 0, attempts = 0, since = ?2, due = ?2, lease_owner = NULL,
                lease_until = 0, last_error = NULL
            WHERE dead = 1 AND seq IN (SELECT seq FROM event_outbox WHERE id = ?1)
            """)
        try statement.bind(1, id)
        try statement.bind(2, now.nanosecondsSinceEpoch)
        try statement.run()
        return db.changes
    }
}

/// One event (and one of its deliveries) as `portcullis events list` shows it.
public struct OutboxEntry: Sendable, Equatable {
    public let sequence: Int64
    public let id: String
    public let kind: String
    public let bucket: String
    public let name: String
    public let time: Timestamp
    /// nil: not fanned out to webhooks yet.
    public let webhook: String?
    public let attempts: Int
    public let due: Timestamp?
    public let deadLettered: Bool
    public let lastError: String?
}
