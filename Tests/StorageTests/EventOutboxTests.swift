import PortcullisCore
import Testing

@testable import Storage

/// The embedded outbox's delivery bookkeeping: fan-out, per-object order, leases between processes (a second
/// ledger on its own SQLite connections stands in for another process), dead letters and redelivery.
@Suite struct EventOutboxTests {
    struct Setup {
        let directory = TemporaryDirectory()
        let backend: EmbeddedBackend
        let ledger: any EventLedger

        init() throws {
            backend = try EmbeddedBackend.open(directory: directory.path, bucket: "b")
            ledger = backend.eventLedger
        }

        /// Writes `name`, recording its events with ids `name#n`.
        @discardableResult
        func write(_ name: String, _ bytes: [UInt8] = [1]) async throws -> ObjectMetadata {
            try await backend.write(
                ObjectPath(bucket: "b", name: name), body: BufferByteStream(bytes),
                attributes: ObjectAttributes(), options: WriteOptions(changes: Self.recorder))
        }

        static let recorder = ChangeRecorder { change in
            ChangeEvent(
                id: "\(change.object.name)@\(change.object.generation)/\(change.kind.rawValue)",
                kind: change.kind, bucket: change.object.bucket, name: change.object.name, time: change.time,
                body: Array(change.object.name.utf8))
        }

        /// Another process's view of the same directory: its own connections and lease owner.
        func otherProcess() throws -> EmbeddedEventLedger {
            let path = backend.directory + "/index.sqlite"
            return EmbeddedEventLedger(
                writer: DatabaseLane(
                    label: "other.writer", connection: try SQLiteDatabase(path: path, busyTimeoutMilliseconds: 5000)),
                reader: DatabaseLane(
                    label: "other.reader", connection: try SQLiteDatabase(path: path, busyTimeoutMilliseconds: 5000)))
        }
    }

    static func names(_ claims: [DeliveryClaim]) -> [String] { claims.map(\.event.name) }

    @Test func perObjectOrderAcrossRetriesAndDeadLetters() async throws {
        let s = try Setup()
        try await s.write("a")
        try await s.write("a", [2])
        try await s.write("c")
        let now = Timestamp.now()
        let lease = now.adding(.seconds(60))
        // "a" was written twice: finalized, then deleted + finalized. Only the first "a" event is a head.
        let first = try await s.ledger.claim(webhooks: ["w"], now: now, limit: 10, leaseUntil: lease)
        #expect(first.map(\.event.kind) == [.finalized, .finalized])
        #expect(Self.names(first) == ["a", "c"])
        #expect(first.allSatisfy { $0.failedAttempts == 0 })
        let a1 = try #require(first.first)
        try await s.ledger.acknowledge(first[1])
        try await s.ledger.retry(a1, at: now.adding(.seconds(30)), error: "HTTP 500")
        // a's next events wait behind a1, which is not due yet.
        #expect(try await s.ledger.claim(webhooks: ["w"], now: now, limit: 10, leaseUntil: lease).isEmpty)
        #expect(try await s.ledger.nextDue(webhooks: ["w"]) == now.adding(.seconds(30)))
        let retried = try await s.ledger.claim(
            webhooks: ["w"], now: now.adding(.seconds(30)), limit: 10, leaseUntil: lease)
        #expect(retried.map(\.event.id) == [a1.event.id])
        #expect(retried.first?.failedAttempts == 1)
        try await s.ledger.deadLetter(retried[0], error: "gave up")
        // Dead-lettered: no longer holding the object back.
        let rest = try await s.ledger.claim(webhooks: ["w"], now: now, limit: 10, leaseUntil: lease)
        #expect(rest.map(\.event.kind) == [.deleted])
        try await s.ledger.acknowledge(rest[0])
        let last = try await s.ledger.claim(webhooks: ["w"], now: now, limit: 10, leaseUntil: lease)
        #expect(last.map(\.event.kind) == [.finalized])
        try await s.ledger.acknowledge(last[0])
        #expect(try await s.ledger.pendingCount() == 0)
        // The dead letter is kept, and redelivery revives it with a fresh window.
        let admin = try EventOutboxAdmin(directory: s.directory.path)
        let dead = try admin.list(deadOnly: true)
        #expect(dead.map(\.id) == [a1.event.id])
        #expect(dead.first?.lastError == "gave up")
        #expect(dead.first?.attempts == 2)
        #expect(try admin.redeliver([a1.event.id, "no-such-id"]) == [1, 0])
        #expect(try admin.list(deadOnly: true).isEmpty)
        let revived = try await s.ledger.claim(webhooks: ["w"], now: .now(), limit: 10, leaseUntil: lease)
        #expect(revived.map(\.event.id) == [a1.event.id])
        #expect(revived.first?.failedAttempts == 0)
        #expect(revived[0].windowStart > now)
    }

    @Test func everyWebhookGetsItsOwnDelivery() async throws {
        let s = try Setup()
        try await s.write("x")
        let now = Timestamp.now()
        let claims = try await s.ledger.claim(
            webhooks: ["w1", "w2"], now: now, limit: 10, leaseUntil: now.adding(.seconds(60)))
        #expect(claims.map(\.webhook).sorted() == ["w1", "w2"])
        try await s.ledger.acknowledge(claims[0])
        #expect(try await s.ledger.pendingCount() == 1)
        try await s.ledger.acknowledge(claims[1])
        #expect(try await s.ledger.pendingCount() == 0)
        #expect(try EventOutboxAdmin(directory: s.directory.path).list(deadOnly: false).isEmpty)
    }

    /// Two processes on one directory: a leased delivery is not claimed twice while its lease runs; once the
    /// holder's lease ends (it died), the other takes it over; the dead holder's late retry changes nothing.
    @Test func leasesKeepProcessesFromDeliveringTwice() async throws {
        let s = try Setup()
        for i in 0..<6 { try await s.write("o\(i)") }
        let other = try s.otherProcess()
        let now = Timestamp.now()
        let lease = now.adding(.seconds(60))
        async let mine = s.ledger.claim(webhooks: ["w"], now: now, limit: 4, leaseUntil: lease)
        async let theirs = other.claim(webhooks: ["w"], now: now, limit: 4, leaseUntil: now.adding(.seconds(600)))
        let (a, b) = try await (mine, theirs)
        #expect(a.count + b.count == 6)
        #expect(Set(Self.names(a)).isDisjoint(with: Self.names(b)))
        #expect(try await other.claim(webhooks: ["w"], now: now, limit: 10, leaseUntil: lease).isEmpty)
        // The first process dies; after its lease ends the other process claims its deliveries.
        let later = lease.adding(.seconds(1))
        let takenOver = try await other.claim(
            webhooks: ["w"], now: later, limit: 10, leaseUntil: later.adding(.seconds(60)))
        #expect(Set(Self.names(takenOver)) == Set(Self.names(a)))
        for claim in a { try await s.ledger.retry(claim, at: later, error: "late") }
        #expect(try await other.claim(webhooks: ["w"], now: later, limit: 10, leaseUntil: later).isEmpty)
        for claim in takenOver + b { try await other.acknowledge(claim) }
        #expect(try await s.ledger.pendingCount() == 0)
    }

    /// A process that opens the directory alone ends every lease (the holders are gone) and makes every live
    /// delivery due now, so a restart after kill -9 resumes at once.
    @Test func soleOwnerReleasesLeasesAtOpen() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path
        do {
            let backend = try EmbeddedBackend.open(directory: path, bucket: "b")
            _ = try await backend.write(
                ObjectPath(bucket: "b", name: "n"), body: BufferByteStream([1]),
                attributes: ObjectAttributes(), options: WriteOptions(changes: Setup.recorder))
            let now = Timestamp.now()
            let claims = try await backend.eventLedger.claim(
                webhooks: ["w"], now: now, limit: 10,
                leaseUntil: now.adding(.seconds(3600)))
            #expect(claims.count == 1)
        }
        // The store above is gone (its last backend released): reopening is a fresh, sole owner.
        let reopened = try EmbeddedBackend.open(directory: path, bucket: "b")
        let now = Timestamp.now()
        let claims = try await reopened.eventLedger.claim(webhooks: ["w"], now: now, limit: 10, leaseUntil: now)
        #expect(Self.names(claims) == ["n"])
    }
}
