import Dispatch
import Foundation
import PortcullisCore
import Synchronization
import Testing

@Suite struct EventLoopThreadsTests {
    /// A thread is an event loop's once it marked itself, and only that thread; a marked queue's blocks are too,
    /// on whatever thread runs them.
    @Test func markedThreadsAndQueuesAreEventLoops() {
        #expect(!EventLoopThreads.isCurrent)
        let seen = Mutex<(marked: Bool, other: Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            EventLoopThreads.markCurrentThread()
            let marked = EventLoopThreads.isCurrent
            let other = Mutex(true)
            let inner = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                other.withLock { $0 = EventLoopThreads.isCurrent }
                inner.signal()
            }
            inner.wait()
            seen.withLock { $0 = (marked, other.withLock { $0 }) }
            done.signal()
        }
        done.wait()
        #expect(seen.withLock { $0 }?.marked == true)
        #expect(seen.withLock { $0 }?.other == false)

        let queue = DispatchQueue(label: "test.loop")
        queue.setSpecific(key: EventLoopThreads.queueKey, value: true)
        #expect(queue.sync { EventLoopThreads.isCurrent })
        #expect(!EventLoopThreads.isCurrent)
        // Off a loop, a call that may block passes the check.
        EventLoopThreads.assertMayBlock("a test's fsync")
    }
}
