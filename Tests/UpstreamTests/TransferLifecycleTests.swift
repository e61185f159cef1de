import Testing

@testable import Upstream

/// `TransferLifecycle` as a pure value: both upstream timeouts (first byte, idle) and every transition, with
/// the clock as a plain number and a string standing in for the curl handle. No transfer, no sleep.
@Suite struct TransferLifecycleTests {
    typealias Lifecycle = TransferLifecycle<String>
    static let second: UInt64 = 1_000_000_000

    static func make(firstByte: UInt64? = 30 * second, idle: UInt64? = 30 * second) -> Lifecycle {
        Lifecycle(firstByteTimeout: firstByte, idleTimeout: idle)
    }

    /// The first-byte deadline starts when the whole request is sent, not when the transfer starts.
    @Test func firstByteTimeoutCountsFromTheEndOfTheRequest() {
        var lifecycle = Self.make()
        #expect(lifecycle.start("h", requestComplete: false, now: 0) == nil, "a body is still being sent")
        #expect(lifecycle.expiry(now: 100 * Self.second) == nil, "no first-byte deadline while sending")
        let deadline = lifecycle.requestSent(now: 50 * Self.second)
        #expect(deadline == 80 * Self.second)
        #expect(lifecycle.requestSent(now: 60 * Self.second) == nil, "sent once")
        #expect(lifecycle.expiry(now: 80 * Self.second - 1) == nil)
        #expect(lifecycle.expiry(now: 80 * Self.second) == .timedOut(.firstByte))
    }

    @Test func bodilessRequestStartsTheFirstByteDeadlineAtOnce() {
        var lifecycle = Self.make(firstByte: 5 * Self.second)
        #expect(lifecycle.start("h", requestComplete: true, now: 10) == 10 + 5 * Self.second)
        guard case .awaitingHead("h", let deadline) = lifecycle.state else {
            Issue.record("\(lifecycle.state)"); return
        }
        #expect(deadline == 10 + 5 * Self.second)
        #expect(lifecycle.handle == "h")
    }

    /// The head stops the first-byte clock and starts the idle one.
    @Test func idleTimeoutCountsFromTheLastActivity() {
        var lifecycle = Self.make(firstByte: 1 * Self.second, idle: 10 * Self.second)
        _ = lifecycle.start("h", requestComplete: true, now: 0)
        #expect(lifecycle.headArrived(now: Self.second / 2) == "h")
        #expect(lifecycle.headDelivered)
        #expect(lifecycle.headArrived(now: Self.second) == nil, "delivered once")
        #expect(lifecycle.expiry(now: 5 * Self.second) == nil, "no first-byte timeout after the head")
        lifecycle.activity(now: 4 * Self.second)
        #expect(lifecycle.expiry(now: 14 * Self.second - 1) == nil)
        #expect(lifecycle.expiry(now: 14 * Self.second) == .timedOut(.idle))
        // Time paused by a slow consumer is reported as activity by the caller, and restarts the clock.
        lifecycle.activity(now: 13 * Self.second)
        #expect(lifecycle.expiry(now: 22 * Self.second) == nil)
        #expect(lifecycle.expiry(now: 23 * Self.second) == .timedOut(.idle))
    }

    /// The loop reads the clock once per turn, so a check may carry a time older than the last activity it saw.
    @Test func aCheckTimedBeforeTheLastActivityIsNoTimeout() {
        var lifecycle = Self.make(firstByte: nil, idle: 10 * Self.second)
        _ = lifecycle.start("h", requestComplete: true, now: 0)
        _ = lifecycle.headArrived(now: 5 * Self.second)
        #expect(lifecycle.expiry(now: 5 * Self.second - 1) == nil)
    }

    @Test func disabledTimeoutsNeverExpire() {
        var lifecycle = Self.make(firstByte: nil, idle: nil)
        #expect(lifecycle.start("h", requestComplete: true, now: 0) == nil)
        #expect(lifecycle.expiry(now: .max) == nil)
        _ = lifecycle.headArrived(now: 1)
        #expect(lifecycle.expiry(now: .max) == nil)
    }

    /// An early answer (the head while the body is still being sent) goes straight to streaming.
    @Test func headWhileSendingGoesStraightToStreaming() {
        var lifecycle = Self.make()
        _ = lifecycle.start("h", requestComplete: false, now: 0)
        #expect(lifecycle.headArrived(now: 3) == "h")
        #expect(lifecycle.requestSent(now: 4) == nil, "the rest of the body no longer arms a first-byte deadline")
        guard case .streaming("h", lastActivity: 3) = lifecycle.state else {
            Issue.record("\(lifecycle.state)"); return
        }
    }

    /// An abort that arrives before `start` ran is reported by `start`; once running, the caller finishes.
    @Test func abortBeforeAndAfterStart() {
        var early = Self.make()
        let aborted = early.abortBeforeStart(.cancelled)
        #expect(aborted)
        let reported = early.takeEarlyAbort()
        #expect(reported == .cancelled)
        #expect(early.isFinished)
        let again = early.takeEarlyAbort()
        #expect(again == nil)

        var running = Self.make()
        _ = running.start("h", requestComplete: true, now: 0)
        let abortedLate = running.abortBeforeStart(.cancelled)
        #expect(!abortedLate, "a running transfer is finished by the caller instead")
        let finished = running.finish()
        #expect(finished.handle == "h")
        #expect(!finished.headDelivered)
        let second = running.finish()
        #expect(second.handle == nil, "the handle is handed out for cleanup once")
        #expect(running.expiry(now: .max) == nil)
    }

    @Test func finishAfterTheHeadSaysSo() {
        var lifecycle = Self.make()
        _ = lifecycle.start("h", requestComplete: true, now: 0)
        _ = lifecycle.headArrived(now: 1)
        let finished = lifecycle.finish()
        #expect(finished.handle == "h")
        #expect(finished.headDelivered)
    }

    /// Starting twice, or a head before the start, is a bug: the process stops.
    @Test func illegalTransitionsArePreconditionFailures() async {
        await #expect(processExitsWith: .failure) {
            var lifecycle = TransferLifecycle<String>(firstByteTimeout: nil, idleTimeout: nil)
            _ = lifecycle.start("a", requestComplete: true, now: 0)
            _ = lifecycle.start("b", requestComplete: true, now: 0)
        }
        await #expect(processExitsWith: .failure) {
            var lifecycle = TransferLifecycle<String>(firstByteTimeout: nil, idleTimeout: nil)
            _ = lifecycle.headArrived(now: 0)
        }
    }
}
