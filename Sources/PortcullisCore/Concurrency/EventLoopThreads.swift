public import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which threads run HTTP event loops, so that code which may block can check, in debug builds, that it does not
/// run on one (as SwiftNIO's `preconditionNotInEventLoop`): a loop that blocks stalls every connection it serves.
///
/// An epoll loop's thread marks itself when it starts (`markCurrentThread`); a Dispatch loop marks its serial
/// queue (`queueKey`), since its blocks run on whichever Dispatch thread is free. The brief, bounded calls an
/// event loop's permit allows (`InPlaceLookupPermit`) do not check: they are the one exception.
public enum EventLoopThreads {
    /// The mark a Dispatch event loop sets on its queue.
    public static let queueKey = DispatchSpecificKey<Bool>()

    /// Marks the calling thread as an event loop's for the rest of its life (an epoll loop's own thread).
    public static func markCurrentThread() {
        _ = pthread_setspecific(threadKey.key, UnsafeRawPointer(bitPattern: 1))
    }

    /// Whether the calling code runs on an event loop: a marked thread, or a block of a marked queue.
    public static var isCurrent: Bool {
        pthread_getspecific(threadKey.key) != nil || DispatchQueue.getSpecific(key: queueKey) == true
    }

    /// In debug builds, stops the process when called on an event loop: `operation` may block (an `fsync`, a
    /// write transaction) and belongs on a blocking lane. Compiled out of release builds.
    @inline(__always)
    public static func assertMayBlock(_ operation: @autoclosure () -> String) {
        #if DEBUG
        if isCurrent { preconditionFailure("\(operation()) may block, and it was called on an event loop") }
        #endif
    }

    /// The thread-specific slot, created once.
    private static let threadKey = ThreadKey()

    private final class ThreadKey: Sendable {
        let key: pthread_key_t
        init() {
            var key = pthread_key_t()
            guard pthread_key_create(&key, nil) == 0 else { preconditionFailure("pthread_key_create failed") }
            self.key = key
        }
    }
}
