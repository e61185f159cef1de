import Testing

@testable import Upstream

/// `CurlLoopDeadlines` as a pure value: the clock is a plain number of nanoseconds.
@Suite struct CurlLoopDeadlinesTests {
    static let ms: UInt64 = 1_000_000

    @Test func curlsTimerFollowsWhatCurlAsks() {
        var deadlines = CurlLoopDeadlines<Int>()
        #expect(deadlines.next == nil)
        deadlines.curlAsked(milliseconds: 100, now: 0)
        deadlines.curlAsked(milliseconds: 500, now: 10 * Self.ms)
        #expect(deadlines.next == 510 * Self.ms, "a later deadline replaces the earlier one: curl holds one timer")
        let early = deadlines.takeCurl(now: 509 * Self.ms)
        #expect(!early)
        let onTime = deadlines.takeCurl(now: 510 * Self.ms)
        #expect(onTime)
        // curl ran the timeout and reported its next deadline from inside the run: that one counts.
        deadlines.curlAsked(milliseconds: 2_000, now: 510 * Self.ms)
        #expect(deadlines.next == 2_510 * Self.ms)
    }

    /// The case a single-shot timer gets wrong: curl truncates the delay it reports, the timer fires before curl's
    /// own deadline, curl runs nothing and reports nothing (its deadline did not change). The timer must come
    /// again, or the timeout curl waits for (a connect timeout, a stalled body's limit) never runs.
    @Test func aRunThatCurlAnswersWithNothingIsRetriedAMillisecondLater() {
        var deadlines = CurlLoopDeadlines<Int>()
        deadlines.curlAsked(milliseconds: 4, now: 0)
        let first = deadlines.takeCurl(now: 4 * Self.ms)
        #expect(first)
        #expect(deadlines.next == 5 * Self.ms, "retry armed; curl said nothing during the run")
        let retry = deadlines.takeCurl(now: 5 * Self.ms)
        #expect(retry)
        deadlines.curlAsked(milliseconds: -1, now: 5 * Self.ms)
        #expect(deadlines.next == nil, "curl ran it and holds no timeout: nothing armed")
    }

    /// A due timeout that running changes nothing about (curl reports nothing after the run, nor after the retry)
    /// is not run again and again: after the one retry nothing is armed, until curl reports a deadline anew.
    @Test func theRetryIsOneShot() {
        var deadlines = CurlLoopDeadlines<Int>()
        deadlines.curlAsked(milliseconds: 0, now: 0)
        let run1 = deadlines.takeCurl(now: 0)
        #expect(run1)
        #expect(deadlines.next == 1 * Self.ms)
        let run2 = deadlines.takeCurl(now: 1 * Self.ms)
        #expect(run2)
        #expect(deadlines.next == nil, "curl answered the retry with nothing: the loop may sleep")
        let run3 = deadlines.takeCurl(now: 2 * Self.ms)
        #expect(!run3)
        // A later report arms the timer again, with its own one retry.
        deadlines.curlAsked(milliseconds: 3, now: 10 * Self.ms)
        let run4 = deadlines.takeCurl(now: 13 * Self.ms)
        #expect(run4)
        #expect(deadlines.next == 14 * Self.ms)
        let run5 = deadlines.takeCurl(now: 14 * Self.ms)
        #expect(run5)
        #expect(deadlines.next == nil)
    }

    @Test func aNegativeDelayCancelsAndZeroIsDueAtOnce() {
        var deadlines = CurlLoopDeadlines<Int>()
        deadlines.curlAsked(milliseconds: 100, now: 0)
        deadlines.curlAsked(milliseconds: -1, now: 1)
        #expect(deadlines.next == nil)
        deadlines.curlAsked(milliseconds: 0, now: 7)
        #expect(deadlines.next == 7)
        let atOnce = deadlines.takeCurl(now: 7)
        #expect(atOnce)
    }

    @Test func theFirstArmedFlushServesLaterRequestsUntilTaken() {
        var deadlines = CurlLoopDeadlines<Int>()
        deadlines.armFlush(at: 5 * Self.ms)
        deadlines.armFlush(at: 6 * Self.ms)
        #expect(deadlines.flush == 5 * Self.ms)
        let early = deadlines.takeFlush(now: 4 * Self.ms)
        #expect(!early)
        let onTime = deadlines.takeFlush(now: 5 * Self.ms)
        #expect(onTime)
        deadlines.armFlush(at: 9 * Self.ms)
        #expect(deadlines.flush == 9 * Self.ms)
    }

    @Test func keyedDeadlinesAreTakenOnceWhenDueAndCancelledOnesNever() {
        var deadlines = CurlLoopDeadlines<String>()
        deadlines.set("a", at: 100 * Self.ms)
        deadlines.set("b", at: 200 * Self.ms)
        deadlines.set("c", at: 300 * Self.ms)
        deadlines.cancel("a")
        #expect(deadlines.next == 100 * Self.ms, "a cancel leaves the bound early; nothing is lost by that")
        let beforeB = deadlines.takeDue(now: 150 * Self.ms)
        #expect(beforeB.isEmpty)
        #expect(deadlines.next == 200 * Self.ms, "the scan found the true earliest")
        let dueAtC = deadlines.takeDue(now: 300 * Self.ms)
        #expect(dueAtC.sorted() == ["b", "c"])
        #expect(deadlines.next == nil)
        let afterAll = deadlines.takeDue(now: 1_000 * Self.ms)
        #expect(afterAll.isEmpty)
    }

    @Test func resettingAKeyMovesItsDeadline() {
        var deadlines = CurlLoopDeadlines<String>()
        deadlines.set("a", at: 100 * Self.ms)
        deadlines.set("a", at: 400 * Self.ms)
        let atOldDeadline = deadlines.takeDue(now: 100 * Self.ms)
        #expect(atOldDeadline.isEmpty)
        let atNewDeadline = deadlines.takeDue(now: 400 * Self.ms)
        #expect(atNewDeadline == ["a"])
    }

    @Test func nextIsTheEarliestOfAllThree() {
        var deadlines = CurlLoopDeadlines<String>()
        deadlines.set("a", at: 300 * Self.ms)
        deadlines.armFlush(at: 200 * Self.ms)
        deadlines.curlAsked(milliseconds: 250, now: 0)
        #expect(deadlines.next == 200 * Self.ms)
        let flushDue = deadlines.takeFlush(now: 200 * Self.ms)
        #expect(flushDue)
        #expect(deadlines.next == 250 * Self.ms)
        let curlDue = deadlines.takeCurl(now: 250 * Self.ms)
        #expect(curlDue)
        deadlines.curlAsked(milliseconds: -1, now: 250 * Self.ms)
        #expect(deadlines.next == 300 * Self.ms)
        deadlines.cancel("a")
        #expect(deadlines.next == nil, "the last keyed deadline cancelled: nothing armed")
    }

    /// Thousands of requests set and cancel a first-byte deadline each; the table must not keep them.
    @Test func cancelledDeadlinesLeaveNothingBehind() {
        var deadlines = CurlLoopDeadlines<Int>()
        deadlines.set(-1, at: 10_000 * Self.ms)
        for key in 0..<10_000 {
            deadlines.set(key, at: UInt64(key) * Self.ms + 30_000 * Self.ms)
            deadlines.cancel(key)
        }
        let due = deadlines.takeDue(now: 10_000 * Self.ms)
        #expect(due == [-1])
        #expect(deadlines.next == nil)
    }
}
