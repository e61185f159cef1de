import Dispatch
import Foundation
import Synchronization
import Testing

@testable import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

@Suite struct InPlaceLookupTests {
    /// A permit applies only on the thread it covers, and no permit applies nowhere.
    @Test func aPermitAppliesOnlyOnItsThread() {
        #expect(!InPlaceLookup.applies(nil))
        let permit = CurrentThreadPermit()
        #expect(InPlaceLookup.applies(permit))
        // Another thread holding the very same permit is not covered by it.
        let seen = Mutex(true)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            seen.withLock { $0 = InPlaceLookup.applies(permit) }
            done.signal()
        }
        done.wait()
        #expect(!seen.withLock { $0 })
    }

    /// A task started on the permit's thread may use it until it suspends; resumed on the cooperative pool, it
    /// still holds the permit, which no longer applies there.
    @Test func aTaskHoldingThePermitLosesItAfterSuspending() async {
        let observed = Observed()
        // A thread of our own stands in for an event loop's (no task runs on it, and it is never a pool thread).
        // It lives until the task has reported, as a loop's thread lives for the process: a thread that exited
        // could have its id reused by a pool thread.
        Thread.detachNewThread {
            let permit = CurrentThreadPermit()
            Task.immediate {
                let before = InPlaceLookup.applies(permit)
                try? await Task.sleep(for: .milliseconds(1))
                observed.value.withLock { $0 = (before, InPlaceLookup.applies(permit), true) }
            }
            while observed.value.withLock({ $0 }) == nil { usleep(1000) }
        }
        // Polled from a Dispatch thread: the cooperative pool may be busy with other suites.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                let end = MonotonicClock.nanoseconds() + 60_000_000_000
                while observed.value.withLock({ $0 }) == nil && MonotonicClock.nanoseconds() < end { usleep(1000) }
                continuation.resume()
            }
        }
        let result = observed.value.withLock { $0 }
        #expect(result?.before == true)
        #expect(result?.after == false)
    }
}

private final class Observed: Sendable {
    let value = Mutex<(before: Bool, after: Bool, bound: Bool)?>(nil)
}

/// Covers the thread that created it.
private final class CurrentThreadPermit: InPlaceLookupPermit {
    private let thread = pthread_self()
    var coversCurrentThread: Bool { pthread_equal(pthread_self(), thread) != 0 }
}
