#if canImport(Glibc)
import Glibc
#endif

/// glibc malloc settings for `serve`, applied once at start-up before any worker thread exists.
///
/// Why: a streaming gateway allocates and frees many same-sized body chunks (64 KiB) on a handful of Dispatch
/// worker threads. With glibc's defaults each thread that ever contends gets its own arena (up to 8 per core),
/// freed chunks are spread over all of them, and non-main arena heaps are trimmed and re-faulted over and over
/// while a download runs (measured: `madvise` + page faults on every ~2 MiB streamed). Two arenas keep the free
/// chunks where the next allocation finds them (bench S11: 200 slow readers), and a 4 MiB trim threshold stops
/// the trim/re-fault churn without holding much: memory above it at the top of a heap is still returned.
///
/// An operator's own `MALLOC_ARENA_MAX` / `MALLOC_TRIM_THRESHOLD_` (glibc reads them itself) wins: each setting is
/// applied only when its variable is absent.
enum AllocatorTuning {
    static let arenaMax: Int32 = 2
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
        if environment["MALLOC_ARENA_MAX"] == nil { _ = mallopt(optionArenaMax, arenaMax) }
        if environment["MALLOC_TRIM_THRESHOLD_"] == nil { _ = mallopt(optionTrimThreshold, trimThreshold) }
        #endif
    }
}
