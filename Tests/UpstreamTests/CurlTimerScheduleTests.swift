import Testing

@testable import Upstream

/// `CurlTimerSchedule` as a pure value: the clock is a plain number of nanoseconds. The timer only moves
/// earlier, and an early run re-arms for the deadline curl still holds.
@Suite struct CurlTimerScheduleTests {
    static let ms: UInt64 = 1_000_000

    @Test func aLaterDeadlineLeavesTheTimerArmedAndAnEarlierOneMovesIt() {
        var schedule = CurlTimerSchedule()
        #expect(schedule.curlAsked(milliseconds: 100, now: 0) == 100 * Self.ms)
        #expect(schedule.curlAsked(milliseconds: 500, now: 10 * Self.ms) == nil, "later: no re-arm")
        #expect(schedule.armed == 100 * Self.ms)
        #expect(schedule.curlAsked(milliseconds: 50, now: 20 * Self.ms) == 70 * Self.ms, "earlier: moved")
        #expect(schedule.armed == 70 * Self.ms)
    }

    /// The case a plain "never move it later" timer gets wrong: curl moved its deadline later, the timer fires at
    /// the old one, curl runs nothing and reports nothing (its deadline did not change) — the timer must be
    /// armed again for curl's deadline, or that timeout never runs.
    @Test func anEarlyRunReArmsForTheDeadlineCurlStillHolds() {
        var schedule = CurlTimerSchedule()
        _ = schedule.curlAsked(milliseconds: 100, now: 0)
        _ = schedule.curlAsked(milliseconds: 1000, now: 1 * Self.ms)
        schedule.firing()
        #expect(schedule.afterRun(now: 100 * Self.ms) == 1001 * Self.ms)
        #expect(schedule.armed == 1001 * Self.ms)
    }

    @Test func aRunThatGotANewDeadlineFromCurlKeepsIt() {
        var schedule = CurlTimerSchedule()
        _ = schedule.curlAsked(milliseconds: 100, now: 0)
        schedule.firing()
        // curl ran its expired timeouts and asked for the next one from inside the run.
        #expect(schedule.curlAsked(milliseconds: 1000, now: 100 * Self.ms) == 1100 * Self.ms)
        #expect(schedule.afterRun(now: 101 * Self.ms) == nil, "already armed")
        #expect(schedule.armed == 1100 * Self.ms)
    }

    @Test func nothingIsReArmedOnceCurlCancelledOrItsDeadlinePassed() {
        var cancelled = CurlTimerSchedule()
        _ = cancelled.curlAsked(milliseconds: 100, now: 0)
        #expect(cancelled.curlAsked(milliseconds: -1, now: 5 * Self.ms) == nil, "a cancellation leaves it armed")
        #expect(cancelled.armed == 100 * Self.ms)
        cancelled.firing()
        #expect(cancelled.afterRun(now: 100 * Self.ms) == nil)
        #expect(cancelled.armed == nil)

        var passed = CurlTimerSchedule()
        _ = passed.curlAsked(milliseconds: 100, now: 0)
        passed.firing()
        #expect(passed.afterRun(now: 150 * Self.ms) == nil, "curl's own deadline came: it ran")
    }

    @Test func aZeroDelayIsRunByTheLoopNotTheTimer() {
        var schedule = CurlTimerSchedule()
        #expect(schedule.curlAsked(milliseconds: 0, now: 7) == nil)
        #expect(schedule.armed == nil)
        #expect(schedule.wanted == 7)
    }
}
