import Events
import PortcullisCore
import Synchronization
import Testing

/// The delivery engine on a manual clock and a scripted receiver: every step is an explicit `pass()`, and
/// waiting for deliveries is `quiesce()` — no sleeping.
@Suite struct EventDispatcherTests {
    static let hook = try! Webhook.parse("http://127.0.0.1:9/hook").get()

    struct Harness {
        let clock = ManualClock()
        let registry = MetricsRegistry()
        let ledger: MemoryEventLedger
        let dispatcher: EventDispatcher

        init(
            transport: any WebhookTransport, webhooks: [Webhook] = [EventDispatcherTests.hook],
            policy: RetryPolicy = .standard, maxInFlight: Int = 32, signer: EventSigner? = nil
        ) {
            ledger = MemoryEventLedger(webhooks: webhooks.map(\.url))
            let metrics = EventMetrics(registry: registry) { 0 }
            dispatcher = EventDispatcher(
                ledger: ledger, webhooks: webhooks, transport: transport, signer: signer,
                policy: policy, clock: clock, metrics: metrics, logger: .disabled,
                settings: .init(maxInFlight: maxInFlight), jitter: { 0 })
        }

        func enqueue(_ events: ChangeEvent...) { ledger.enqueue(events, now: clock.now()) }

        /// One pass and every attempt it started, to completion.
        @discardableResult
        func step() async -> Int {
            let started = await dispatcher.pass()
            await dispatcher.quiesce()
            return started
        }
    }

    @Test func laterEventsOfAnObjectWaitForTheEarlierOneWhileOtherObjectsProceed() async throws {
        // The first attempt of event 1 fails; everything else succeeds. (Events 1 and 3 are of different objects
        // and go out concurrently in one pass, in either order: the script counts event 1's attempts, not the
        // transport's requests.)
        let firstOfEventOne = Mutex(true)
        let transport = ScriptedTransport { request, _ in
            guard request.header("ce-id") == "1" else { return .acknowledged(status: 200) }
            let first = firstOfEventOne.withLock { first in
                defer { first = false }
                return first
            }
            return first ? .rejected(status: 500) : .acknowledged(status: 200)
        }
        let h = Harness(transport: transport)
        h.enqueue(event("1", "a"), event("2", "a"), event("3", "b"))
        #expect(await h.step() == 2)
        #expect(transport.sentIDs.sorted() == ["1", "3"])
        // Event 1 waits one second; event 2 may not overtake it.
        #expect(await h.step() == 0)
        #expect(transport.sentIDs.sorted() == ["1", "3"])
        h.clock.advance(by: .milliseconds(999))
        #expect(await h.step() == 0)
        h.clock.advance(by: .milliseconds(1))
        #expect(await h.step() == 1)
        #expect(await h.step() == 1)
        #expect(Array(transport.sentIDs.prefix(2)).sorted() == ["1", "3"])
        #expect(Array(transport.sentIDs.dropFirst(2)) == ["1", "2"])
        #expect(try await h.ledger.pendingCount() == 0)
        #expect(h.registry.sample(#"portcullis_events_delivered_total{webhook="http://127.0.0.1:9/hook"}"#) == 3)
        #expect(h.registry.sample(#"portcullis_events_failed_attempts_total{webhook="http://127.0.0.1:9/hook"}"#) == 1)
        #expect(h.registry.sample("portcullis_events_delivery_seconds_count") == 3)
    }

    /// A receiver that never acknowledges: retried on the doubling schedule until the window closes, then
    /// dead-lettered once, counted, and no longer holding back the object's next event.
    @Test func deadLetterAfterTheWindowReleasesTheNextEvent() async throws {
        let policy = RetryPolicy(
            initialDelay: .seconds(1), maxDelay: .seconds(4), maxAge: .seconds(20),
            attemptTimeout: .seconds(10), jitterFraction: 0.5)
        let transport = ScriptedTransport { request, _ in
            request.header("ce-id") == "doomed" ? .failed("connection refused") : .acknowledged(status: 202)
        }
        let h = Harness(transport: transport, policy: policy)
        h.enqueue(event("doomed", "x"), event("next", "x"))
        var offsets: [Int] = []
        for _ in 0..<30 {
            if await h.step() > 0 {
                offsets.append(Int((h.clock.now().nanosecondsSinceEpoch - 1_700_000_000_000_000_000) / 1_000_000_000))
            }
            if transport.sentIDs.last == "next" { break }
            h.clock.advance(by: .seconds(1))
        }
        // Delays 1, 2, 4, 4, 4, 4: the attempt after t=19 would be at t=23 > 20, so the one at t=19 is the last.
        // The webhook failed seven times in a row, so the next event goes when its probe gate opens (t=23).
        let expectedOffsets: [Int] = [0, 1, 3, 7, 11, 15, 19, 23]
        #expect(offsets == expectedOffsets)
        #expect(transport.sentIDs == ["doomed", "doomed", "doomed", "doomed", "doomed", "doomed", "doomed", "next"])
        #expect(h.registry.sample("portcullis_events_dead_lettered_total") == 1)
        #expect(h.registry.sample(#"portcullis_events_failed_attempts_total{webhook="http://127.0.0.1:9/hook"}"#) == 7)
        #expect(try await h.ledger.pendingCount() == 0)
    }

    @Test func everyWebhookGetsEveryEventIndependently() async throws {
        let down = try Webhook.parse("http://127.0.0.1:10/down").get()
        let transport = ScriptedTransport { request, _ in
            request.url == down.url ? .failed("connection refused") : .acknowledged(status: 200)
        }
        let h = Harness(transport: transport, webhooks: [Self.hook, down])
        h.enqueue(event("1", "a"), event("2", "a"))
        await h.step()
        await h.step()
        let toHook = transport.sent.filter { $0.url == Self.hook.url }.compactMap { $0.header("ce-id") }
        let toDown = transport.sent.filter { $0.url == down.url }.compactMap { $0.header("ce-id") }
        #expect(toHook == ["1", "2"])
        #expect(toDown == ["1"])
        #expect(try await h.ledger.pendingCount() == 2)
    }

    /// A dead receiver with many waiting events: after three failures in a row the webhook is only probed,
    /// one attempt at a time with a growing gap, while the other events wait unattempted; when a probe
    /// succeeds, everything due flows again.
    @Test func aDeadWebhookIsProbedNotHammered() async throws {
        let alive = Flag()
        let transport = ScriptedTransport { _, _ in
            alive.isSet ? .acknowledged(status: 200) : .failed("connection refused")
        }
        let h = Harness(transport: transport)
        for i in 0..<10 { h.enqueue(event("\(i)", "object-\(i)")) }
        #expect(await h.step() == 10)
        var attemptsPerSecond: [Int] = []
        for _ in 0..<20 {
            h.clock.advance(by: .seconds(1))
            attemptsPerSecond.append(await h.step())
        }
        // Gates of 1, 2, 4 and 8 s after the burst: probes at t=1, 3, 7 and 15.
        let expected: [Int] = [1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
        #expect(attemptsPerSecond == expected)
        alive.set()
        h.clock.advance(by: .seconds(16))
        #expect(await h.step() == 1)  // the probe that succeeds
        #expect(await h.step() == 9)  // then everything due
        #expect(try await h.ledger.pendingCount() == 0)
        let sent = transport.sent.count
        #expect(sent == 24)  // 10 in the burst, 4 failed probes, 1 good probe, 9 after
    }

    @Test func attemptsInFlightAreBounded() async throws {
        let transport = StalledTransport()
        let h = Harness(transport: transport, maxInFlight: 3)
        h.enqueue(event("1", "a"), event("2", "b"), event("3", "c"), event("4", "d"), event("5", "e"))
        #expect(await h.dispatcher.pass() == 3)
        #expect(await h.dispatcher.pass() == 0)
        #expect(h.dispatcher.inFlight == 3)
        await transport.waitUntilWaiting(3)
        transport.releaseAll()
        await h.dispatcher.quiesce()
        #expect(await h.dispatcher.pass() == 2)
        await transport.waitUntilWaiting(2)
        transport.releaseAll()
        await h.dispatcher.quiesce()
        #expect(try await h.ledger.pendingCount() == 0)
    }

    @Test func requestsCarryTheEventSignedAtSendingTime() async throws {
        let transport = ScriptedTransport()
        let signer = EventSigner(secret: Array(repeating: 9, count: 32))
        let h = Harness(transport: transport, signer: signer)
        let original = event("e", "photo.png", kind: .deleted)
        h.clock.advance(by: .seconds(42))
        h.enqueue(original)
        await h.step()
        let request = try #require(transport.sent.first)
        #expect(request.url == Self.hook.url)
        #expect(request.body == original.body)
        #expect(request.timeout == .seconds(10))
        #expect(request.header("ce-type") == "google.cloud.storage.object.v1.deleted")
        #expect(
            request.header("Portcullis-Signature")
                == signer.signature(body: original.body, at: 1_700_000_042))
    }

    /// The engine sleeps until the next due time: after a failure a wake-up is scheduled for the retry, and
    /// passes that find nothing new schedule no more timers.
    @Test func schedulesOneWakeUpForTheNextRetry() async throws {
        let transport = ScriptedTransport { _, index in index == 0 ? .rejected(status: 503) : .acknowledged(status: 200)
        }
        let h = Harness(transport: transport)
        h.enqueue(event("1", "a"))
        await h.step()
        await h.dispatcher.pass()
        let timers = h.clock.pendingTimers
        // The retry at +1 s, plus at most the lease end (+60 s, if a pass looked while the attempt was in
        // flight) and the next pending-count refresh (+250 ms).
        #expect((1...3).contains(timers))
        for _ in 0..<5 { await h.dispatcher.pass() }
        #expect(h.clock.pendingTimers == timers)
        h.clock.advance(by: .seconds(1))
        #expect(h.clock.pendingTimers <= 1)
        await h.step()
        #expect(transport.sentIDs == ["1", "1"])
    }
}

@Suite struct MemoryEventLedgerTests {
    @Test func overflowIsDroppedCountedAndReported() async throws {
        let reported = ReportedDrops()
        let ledger = MemoryEventLedger(webhooks: ["http://h/"], capacity: 2) { event, total in
            reported.add(event.id, total)
        }
        let now = Timestamp.now()
        #expect(ledger.enqueue([event("1", "a"), event("2", "b"), event("3", "c")], now: now) == 1)
        #expect(ledger.droppedCount == 1)
        #expect(reported.values == ["3:1"])
        #expect(try await ledger.pendingCount() == 2)
        let claims = try await ledger.claim(
            webhooks: ["http://h/"], now: now, limit: 10, leaseUntil: now.adding(.seconds(60)))
        #expect(claims.map(\.event.id) == ["1", "2"])
        // Leased: not claimable again until the lease ends.
        #expect(try await ledger.claim(webhooks: ["http://h/"], now: now, limit: 10, leaseUntil: now).isEmpty)
        #expect(try await ledger.nextDue(webhooks: ["http://h/"]) == now.adding(.seconds(60)))
        for claim in claims { try await ledger.acknowledge(claim) }
        #expect(try await ledger.pendingCount() == 0)
        #expect(ledger.enqueue([event("4", "d")], now: now) == 0)
    }

    @Test func namesAreComparedByBytes() async throws {
        let ledger = MemoryEventLedger(webhooks: ["http://h/"])
        let now = Timestamp.now()
        // Canonically equivalent, different bytes: two objects, so both heads are claimable at once.
        ledger.enqueue([event("1", "caf\u{E9}"), event("2", "cafe\u{301}")], now: now)
        let claims = try await ledger.claim(webhooks: ["http://h/"], now: now, limit: 10, leaseUntil: now)
        #expect(claims.map(\.event.id) == ["1", "2"])
    }
}

final class Flag: Sendable {
    private let state = Mutex(false)
    func set() { state.withLock { $0 = true } }
    var isSet: Bool { state.withLock { $0 } }
}

final class ReportedDrops: Sendable {
    private let state = Mutex<[String]>([])
    func add(_ id: String, _ total: Int) { state.withLock { $0.append("\(id):\(total)") } }
    var values: [String] { state.withLock { $0 } }
}
