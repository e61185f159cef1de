/// Permission to make one brief, bounded blocking call in place — a SQLite point lookup served from the page
/// cache, the `open` of a local file — instead of hopping to a blocking pool (DESIGN §3, "one bounded,
/// measured exception").
///
/// The grantor is an HTTP event loop (`HTTPServer`'s loop seam): it binds its permit as `InPlaceLookup.permit`
/// around the synchronous stretch of a responder it starts, and the permit covers exactly that loop's own
/// thread. The trade is the one nginx makes for `open()`: the request saves the two or three thread hand-offs
/// of a pool round trip (the dominant cost of a cached metadata GET) and the loop's other connections wait
/// for the duration of the call (microseconds; a disk read on a page-cache miss). Scans, writes, fsyncs and
/// anything that may wait on a lock stay on their pools: a caller that cannot bound its call must not use this.
public protocol InPlaceLookupPermit: AnyObject, Sendable {
    /// Whether the calling thread is the one this permit covers (the granting loop's thread, or a thread
    /// currently running its serial queue). Cheap: asked before every eligible lookup.
    var coversCurrentThread: Bool { get }
}

/// Where a permit is visible to the code it was granted to.
///
/// A task-local, so the permit travels with the responder task through every layer between the loop and a
/// backend (no parameter on each protocol in between), and ends with that task tree. It is not enough on its
/// own: a task that suspends resumes on Swift's cooperative pool — which must never block — still carrying
/// the value. Hence the second condition, `coversCurrentThread`: once the task runs elsewhere the permit no
/// longer applies, so nothing here ever blocks the cooperative pool. (An `await` whose result is already
/// there does not leave the loop's thread; the stretch is then still synchronous on the loop, and the permit
/// rightly still applies.)
public enum InPlaceLookup {
    /// The permit of the event loop running the current task's synchronous stretch, if any.
    @TaskLocal public static var permit: (any InPlaceLookupPermit)?

    /// Whether a bounded lookup may run in place right now: a permit is bound and covers this thread.
    @inline(__always)
    public static var isPermitted: Bool { permit?.coversCurrentThread ?? false }
}
