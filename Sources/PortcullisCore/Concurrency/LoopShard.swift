#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One event loop's slot in state kept per loop — metric cells, access-log buffers — so that the loop's hot
/// path writes memory no other thread writes: no lock, no locked instruction, no cache line bouncing between
/// cores. Readers on other threads (a `/metrics` scrape) sum the slots.
///
/// Contract: code holding a shard may write the shard's slot only on that loop's own thread (the HTTP layer
/// hands it out only there: `ExchangeLoop.currentShard`). Everything else uses the synchronised path that
/// every per-loop structure keeps beside its slots.
///
/// The slots are fixed at start: the process's two loop groups (one per event-loop driver, one loop per core)
/// take `0..<capacity`; a loop made outside them (tests) has no shard.
public struct LoopShard: Sendable, Hashable {
    public let index: Int

    /// Loops per driver group: one per online core.
    public static let loopsPerGroup = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// Slots in every per-loop structure: one per loop of both driver groups.
    public static let capacity = 2 * loopsPerGroup

    /// The shard of loop `loop` of driver group `group` (0 or 1).
    public init(group: Int, loop: Int) {
        precondition((0..<2).contains(group) && (0..<Self.loopsPerGroup).contains(loop), "no such loop shard")
        index = group * Self.loopsPerGroup + loop
    }
}
