/// Permission to make one brief, bounded blocking call in place — a SQLite point lookup served from the page
/// cache, the `open` of a local file — instead of hopping to a blocking pool (docs/architecture.md, "one bounded,
/// measured exception").
///
/// The grantor is an HTTP event loop (`HTTPServer`'s loop seam): a request it reads carries the loop
/// (`HTTPRequest.loop`, `ExchangeLoop.inPlacePermit`), and the permit is passed explicitly from there — the
/// gateway puts it on the request's context, the service hands it to a backend that reads in place
/// (`InPlaceReads`). It covers exactly that loop's own thread: a task that suspended and resumed on Swift's
/// cooperative pool — which must never block — still holds the permit, but it no longer applies there. The trade is the one nginx makes for `open()`: the request saves the two or three thread hand-offs
/// of a pool round trip (the dominant cost of a cached metadata GET) and the loop's other connections wait
/// for the duration of the call (microseconds; a disk read on a page-cache miss). Scans, writes, fsyncs and
/// anything that may wait on a lock stay on their pools: a caller that cannot bound its call must not use this.
public protocol InPlaceLookupPermit: AnyObject, Sendable {
    /// Whether the calling thread is the one this permit covers (the granting loop's thread, or a thread
    /// currently running its serial queue). Cheap: asked before every eligible lookup.
    var coversCurrentThread: Bool { get }
}

/// Whether a bounded lookup may run in place right now, under `permit` (nil: no permit).
public enum InPlaceLookup {
    @inline(__always)
    public static func applies(_ permit: (any InPlaceLookupPermit)?) -> Bool { permit?.coversCurrentThread ?? false }
}
