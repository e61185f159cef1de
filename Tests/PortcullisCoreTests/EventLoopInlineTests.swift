import Dispatch
import Testing
@testable import PortcullisCore

@Suite struct EventLoopInlineTests {
    /// The mark holds exactly for the closure's duration, nests, and does not leak to other threads.
    @Test func markIsScopedToTheThreadAndClosure() {
        #expect(!EventLoopInline.isActive)
        let (inside, nested, afterNested, otherThread) = EventLoopInline.run { () -> (Bool, Bool, Bool, Bool) in
            let nested = EventLoopInline.run { EventLoopInline.isActive }
            // `sync` would run the block on this very thread; an async job on the global queue runs on a worker.
            let seen = ManagedFlag()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                seen.value = EventLoopInline.isActive
                done.signal()
            }
            done.wait()
            let otherThread = seen.value
            return (EventLoopInline.isActive, nested, EventLoopInline.isActive, otherThread)
        }
        #expect(inside && nested && afterNested)
        #expect(!otherThread)
        #expect(!EventLoopInline.isActive)
    }

    /// A thrown error passes through and the mark is removed.
    @Test func errorsPassThrough() {
        struct Boom: Error {}
        #expect(throws: Boom.self) { try EventLoopInline.run { () throws(Boom) in throw Boom() } }
        #expect(!EventLoopInline.isActive)
    }
}

/// A flag written by one thread and read by another after a semaphore (which orders the accesses).
private final class ManagedFlag: @unchecked Sendable {
    var value = true
}
