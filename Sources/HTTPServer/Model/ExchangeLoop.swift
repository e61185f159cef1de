public import PortcullisCore

/// The event loop a request arrived on, as a responder sees it: where per-loop state lives (`LoopShard`) and
/// when the loop's turn ends. The access log buffers its lines per loop and writes them at the end of the
/// turn; the HTTP metrics count into per-loop cells.
///
/// Handed out with every request (`HTTPRequest.loop`) and every summary (`ExchangeSummary.loop`). Both
/// accessors check the calling thread, so a responder that already left the loop (after a real suspension)
/// gets nil and takes its synchronised path instead of writing another thread's slot.
public struct ExchangeLoop: Sendable {
    let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    /// The loop's permit for brief in-place lookups (`InPlaceLookupPermit`): it applies on the loop's own thread
    /// only, so code that holds it may use it while it still runs there.
    public var inPlacePermit: any InPlaceLookupPermit { loop }

    /// The loop's shard when called on the loop's own thread; nil elsewhere, or when the loop has none.
    public var currentShard: LoopShard? {
        guard let shard = loop.shard, loop.coversCurrentThread else { return nil }
        return shard
    }

    /// Schedules `job` for the end of the loop's current turn and returns true — only when called on the
    /// loop's own thread; elsewhere it schedules nothing and returns false.
    public func atEndOfTurn(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard loop.coversCurrentThread else { return false }
        loop.atEndOfTurn(job)
        return true
    }
}
