import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// glibc malloc settings for `serve`, applied once at start-up before any worker thread exists.
///
/// Arenas: glibc gives a thread its own arena on its first allocation while fewer than `M_ARENA_MAX` exist, and
/// after that hands threads the existing ones in turn. Two busy threads on one arena take its lock from each
/// other on every allocation and free that misses the thread cache (measured under bench S16 with a limit of 2:
/// about six `futex` calls per proxied request, 6 % of the gateway's samples in lock waits and wakes, whenever
/// the order in which threads first allocated put both HTTP loops on one arena — 8 of 26 starts). The limit
/// covers the threads a running gateway has — main, `upstream`, one HTTP loop per core and Dispatch's workers
/// (the cooperative pool's one per core, and about as many for serial queues) — so each keeps its own (none of
/// 22 starts shared). A body chunk is allocated and freed on the loop that streams it, so per-thread arenas do
/// not scatter free chunks (bench S11, 200 slow readers: 83 MiB with either limit).
///
/// Trim threshold: 4 MiB stops the trim/re-fault churn of non-main arena heaps while a download runs (measured:
/// `madvise` + page faults on every ~2 MiB streamed with the default) without holding much: memory above it at
/// the top of a heap is still returned.
///
/// An operator's own `MALLOC_ARENA_MAX` / `MALLOC_TRIM_THRESHOLD_` (glibc reads them itself) wins: each setting is
/// applied only when its variable is absent.
enum AllocatorTuning {
    /// Main and `upstream`, plus per core an HTTP loop, a cooperative-pool worker and a serial-queue worker.
    static func arenaMax(cores: Int) -> Int32 { Int32(clamping: 2 + 3 * cores) }
    static let trimThreshold: Int32 = 4 << 20

    /// `<malloc.h>` values (stable glibc ABI); Swift's Glibc module does not import that header.
    private static let optionTrimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
    private static let optionArenaMax: Int32 = -8  // M_ARENA_MAX

    static func apply(environment: [String: String]) {
        #if canImport(Glibc)
        // Looked up at run time rather than through a C module of our own: two calls, once, at start-up.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        if environment["MALLOC_ARENA_MAX"] == nil {
            // The loop group has one HTTP loop per online core: the same count the loops are made with.
            _ = mallopt(optionArenaMax, arenaMax(cores: LoopShard.loopsPerGroup))
        }
        if environment["MALLOC_TRIM_THRESHOLD_"] == nil { _ = mallopt(optionTrimThreshold, trimThreshold) }
        #endif
    }
}
