/// Every deadline the curl loop keeps, as one pure value on plain nanoseconds of one monotonic clock: curl's own
/// timer (`CURLMOPT_TIMERFUNCTION`), the flush of response streams holding bytes for a waiting consumer, and each
/// transfer's first-byte deadline. The loop sleeps in `epoll_wait` until `next`, then takes what is due.
///
/// curl's timer: curl reports a deadline only when the earliest timeout it holds changes, and it computes the
/// delay it reports in whole milliseconds, truncated (7.88), so a deadline kept here can come up to a millisecond
/// before curl's own. A run that expires a timeout changes curl's earliest one, and curl reports the new one (or
/// none) from inside that run; a run that came too early changes nothing, and curl reports nothing. So taking
/// the timer leaves a retry a millisecond later, which whatever curl reports during the run replaces: a run too
/// early is followed by another, never by silence while curl still waits for its timeout to be run. The retry is
/// one-shot: a retry run comes at least a millisecond after the deadline curl reported, so every timeout curl
/// held then was due and has run; if curl still reports nothing, its earliest timeout is one that running
/// changes nothing about, and another run a millisecond later would change nothing either. (A gateway idle after
/// proxying holds such a timer: retried without end, it would wake each hosting loop 1,000 times a second.) curl
/// reports again when anything it holds changes.
///
/// First-byte deadlines are set for almost every request and cancelled a few milliseconds later when the head
/// arrives, so cancelling must be cheap and leave nothing behind: they live in a table, with `earliest` kept
/// as a lower bound. A cancel leaves the bound where it was; when it passes, one scan of the table (the
/// transfers waiting for a head, a handful to a few hundred) finds what is really due and the true bound.
struct CurlLoopDeadlines<Key: Hashable> {
    /// When curl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`; nil: curl holds no timeout.
    private(set) var curl: UInt64?
    /// `curl` is the one retry of a run curl answered with nothing.
    private var curlIsRetry = false
    /// When the pending response streams are flushed; nil: none pending.
    private(set) var flush: UInt64?
    private var keyed: [Key: UInt64] = [:]
    /// At or before every deadline in `keyed` (`.max` when it is empty, or may be stale-early).
    private(set) var earliest: UInt64 = .max

    /// curl asked for its timeouts to run in `milliseconds` (negative: it has none; zero: at once).
    mutating func curlAsked(milliseconds: Int, now: UInt64) {
        curl = milliseconds < 0 ? nil : now &+ UInt64(milliseconds) &* 1_000_000
        curlIsRetry = false
    }

    /// Arms the flush for `deadline` unless one is armed (the earlier one serves every pending stream).
    mutating func armFlush(at deadline: UInt64) {
        if flush == nil { flush = deadline }
    }

    mutating func set(_ key: Key, at deadline: UInt64) {
        keyed[key] = deadline
        earliest = min(earliest, deadline)
    }

    mutating func cancel(_ key: Key) {
        keyed[key] = nil
        if keyed.isEmpty { earliest = .max }
    }

    /// The earliest time anything may be due; nil when nothing is armed.
    var next: UInt64? {
        let soonest = min(curl ?? .max, flush ?? .max, earliest)
        return soonest == .max ? nil : soonest
    }

    /// Whether curl's timer is due at `now`; if so the retry is armed, unless this is the retry (see the type's
    /// comment): call `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` next, which reports curl's next deadline,
    /// if it changed.
    mutating func takeCurl(now: UInt64) -> Bool {
        guard let curl, curl <= now else { return false }
        self.curl = curlIsRetry ? nil : now &+ Self.retryNanoseconds
        curlIsRetry = !curlIsRetry
        return true
    }

    static var retryNanoseconds: UInt64 { 1_000_000 }

    /// Whether the flush is due at `now`; if so it is disarmed (the loop re-arms it while streams stay pending).
    mutating func takeFlush(now: UInt64) -> Bool {
        guard let flush, flush <= now else { return false }
        self.flush = nil
        return true
    }

    /// The keys whose deadline is at or before `now`, removed; nothing is scanned before `earliest`.
    mutating func takeDue(now: UInt64) -> [Key] {
        guard earliest <= now else { return [] }
        var due: [Key] = []
        var rest = UInt64.max
        for (key, deadline) in keyed {
            if deadline <= now { due.append(key) } else { rest = min(rest, deadline) }
        }
        for key in due { keyed[key] = nil }
        earliest = rest
        return due
    }
}
