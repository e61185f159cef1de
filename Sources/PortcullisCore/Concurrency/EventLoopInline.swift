#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Marks the current thread, for the duration of a closure, as an HTTP event loop that is running a request
/// synchronously — the stretch of a responder before its first real suspension (DESIGN §3, "brief blocking
/// on the loop").
///
/// While `isActive` is true, code that would otherwise hop to a blocking pool for a *brief and bounded* call
/// may make the call in place: a SQLite point lookup served from the page cache, the `open` of a local file.
/// This is the trade nginx makes for `open()`: it saves the two or three thread hand-offs of a pool round trip
/// per request (the dominant cost of a cached metadata GET), and it costs the loop's other connections the
/// duration of the call (microseconds, or a disk read on a page-cache miss). Scans, writes, fsyncs and
/// anything that may wait on a lock stay on their pools; a caller that cannot bound its call must not use this.
///
/// A thread-local mark, not a task-local: a task that suspends resumes on another thread (Swift's
/// cooperative pool), where the mark is absent, so nothing here ever blocks the cooperative pool.
public enum EventLoopInline {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Whether the current thread is an event loop running a request synchronously.
    @inline(__always)
    public static var isActive: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` with the current thread marked (nesting restores the previous mark).
    public static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, previous) }
        return try body()
    }
}
