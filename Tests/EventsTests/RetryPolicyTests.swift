import Events
import PortcullisCore
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy.standard

    @Test func nominalDelaysDoubleFromOneSecondToFiveMinutes() {
        let seconds = (1...12).map { policy.nominalDelay(afterFailures: $0).components.seconds }
        #expect(seconds == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300])
        #expect(policy.nominalDelay(afterFailures: 10_000) == .seconds(300))
    }

    @Test func jitterTakesAtMostHalf() {
        for failures in [1, 5, 20] {
            let nominal = policy.nominalDelay(afterFailures: failures)
            #expect(policy.delay(afterFailures: failures, jitter: 0) == nominal)
            #expect(policy.delay(afterFailures: failures, jitter: 0.999_999) >= nominal / 2)
            #expect(policy.delay(afterFailures: failures, jitter: 0.5) < nominal)
        }
    }
}

/// The delivery lifecycle, driven with literal times and jitter: no clock, no sleeping.
@Suite struct DeliveryLifecycleTests {
    static let t0 = Timestamp(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)

    func machine(failed: Int = 0, windowStart: Timestamp = t0) -> DeliveryLifecycle {
        DeliveryLifecycle(failedAttempts: failed, committedAt: Self.t0, windowStart: windowStart, policy: .standard)
    }

    @Test func acknowledgementEndsTheDeliveryWithCommitToAckLatency() {
        var lifecycle = machine()
        #expect(lifecycle.start(now: Self.t0.adding(.milliseconds(5))) == .send(timeout: .seconds(10)))
        let action = lifecycle.finished(.acknowledged(status: 204), now: Self.t0.adding(.milliseconds(30)), jitter: 0)
        #expect(action == .acknowledge(latency: .milliseconds(30)))
        #expect(lifecycle.state == .acknowledged)
        // Finished twice, or started after the end: ignored.
        #expect(lifecycle.finished(.acknowledged(status: 200), now: Self.t0, jitter: 0) == .none)
        #expect(lifecycle.start(now: Self.t0) == .none)
    }

    @Test(arguments: [
        DeliveryOutcome.rejected(status: 500), .rejected(status: 404), .rejected(status: 301),
        .failed("connection refused"), .failed("timed out after 10.0 s"),
    ])
    func everythingButTwoHundredsIsRetriedWithBackoff(_ outcome: DeliveryOutcome) {
        var lifecycle = machine()
        _ = lifecycle.start(now: Self.t0)
        let now = Self.t0.adding(.seconds(1))
        let action = lifecycle.finished(outcome, now: now, jitter: 0)
        #expect(action == .retry(at: now.adding(.seconds(1)), reason: outcome.summary))
        #expect(lifecycle.state == .waiting(until: now.adding(.seconds(1))))
        #expect(lifecycle.failedAttempts == 1)
    }

    /// Attempts carried over from the ledger continue the schedule (the 5th failure waits 16 s).
    @Test func scheduleContinuesFromTheLedgersAttemptCount() {
        var lifecycle = machine(failed: 4)
        _ = lifecycle.start(now: Self.t0)
        #expect(
            lifecycle.finished(.rejected(status: 503), now: Self.t0, jitter: 0)
                == .retry(at: Self.t0.adding(.seconds(16)), reason: "HTTP 503"))
    }

    /// A whole day of failures, simulated attempt by attempt: retried until the next attempt would fall
    /// beyond 24 h after the window opened, then dead-lettered exactly once.
    @Test func deadLetteredAfterTwentyFourHours() {
        var now = Self.t0
        var failed = 0
        var attempts = 0
        while true {
            var lifecycle = machine(failed: failed)
            #expect(lifecycle.start(now: now) == .send(timeout: .seconds(10)))
            attempts += 1
            now = now.adding(.seconds(10))  // every attempt times out
            switch lifecycle.finished(.failed("timed out"), now: now, jitter: 0.5) {
            case .retry(let at, _):
                #expect(at > now)
                #expect(at <= Self.t0.adding(.seconds(86_400)))
                now = at
                failed = lifecycle.failedAttempts
            case .deadLetter(let reason):
                #expect(reason.contains("timed out"))
                #expect(
                    now.adding(RetryPolicy.standard.delay(afterFailures: failed + 1, jitter: 0.5))
                        > Self.t0.adding(.seconds(86_400)))
                #expect(lifecycle.state == .deadLettered(reason: reason))
                // 10 ramp-up attempts, then one every 225 s (300 s less a quarter of jitter) + 10 s for the rest of the day.
                #expect((360...390).contains(attempts), "\(attempts) attempts")
                return
            default:
                Issue.record("unexpected action")
                return
            }
        }
    }

    /// A redelivered event gets a new window even if it was committed long ago.
    @Test func windowStartsWhereTheLedgerSays() {
        var lifecycle = machine(windowStart: Self.t0.adding(.seconds(100 * 86_400)))
        let now = Self.t0.adding(.seconds(100 * 86_400 + 5))
        _ = lifecycle.start(now: now)
        #expect(
            lifecycle.finished(.failed("refused"), now: now, jitter: 0)
                == .retry(
                    at: now.adding(.seconds(1)),
                    reason: "refused"))
    }
}
