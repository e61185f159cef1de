/// When the curl loop's Dispatch timer fires, given the deadlines curl asks for (`CURLMOPT_TIMERFUNCTION`). A
/// pure value: times are plain nanoseconds on one monotonic clock, and the loop performs what it answers.
///
/// Why not simply follow curl: every move of a Dispatch timer wakes libdispatch's manager thread (an eventfd write
/// and read) to reprogram its timerfd, and curl moves its timer several times per transfer (start, request sent,
/// done) — about 1.5 wake-ups per proxied request. So the timer is only ever moved earlier: a later deadline or a
/// cancellation leaves it armed. Firing early is harmless (`curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` runs
/// only what has expired), but curl reports a deadline only when it changes, so after an early run the timer must
/// be re-armed here for the deadline curl still holds, or a timeout curl counts on (the idle limit of a stalled
/// body, a connect timeout) would never run.
struct CurlTimerSchedule {
    /// When the timer fires next; `nil` while it is not armed.
    private(set) var armed: UInt64?
    /// The deadline curl last asked for; `nil` after it cancelled its timer.
    private(set) var wanted: UInt64?

    /// curl asked for its timeouts to run in `milliseconds` (negative: it has none). Returns the deadline to arm
    /// the timer for, or `nil` to leave the timer as it is. A zero delay is the loop's to run at once, without
    /// the timer; it still counts as curl's deadline.
    mutating func curlAsked(milliseconds: Int, now: UInt64) -> UInt64? {
        guard milliseconds >= 0 else {
            wanted = nil
            return nil
        }
        let deadline = now &+ UInt64(milliseconds) &* 1_000_000
        wanted = deadline
        guard milliseconds > 0 else { return nil }
        if let armed, armed <= deadline { return nil }
        armed = deadline
        return deadline
    }

    /// The timer fired: call before running curl's timeouts (which may ask for a new deadline).
    mutating func firing() { armed = nil }

    /// After the fired timer's run: the deadline to re-arm for when curl still holds a later one it will not
    /// report again, else `nil`.
    mutating func afterRun(now: UInt64) -> UInt64? {
        guard armed == nil, let wanted, wanted > now else { return nil }
        armed = wanted
        return wanted
    }
}
