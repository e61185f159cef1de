import Dispatch
import Foundation
import Synchronization
import Testing

@testable import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

@Suite struct InPlaceLookupTests {
    /// A permit applies while bound and only on the thread it covers; unbinding restores the previous one.
    @Test func permitIsScopedToItsBindingAndItsThread() {
        #expect(!InPlaceLookup.isPermitted)
        let permit = CurrentThreadPermit()
        let (inside, nested, otherThread) = InPlaceLookup.$permit.withValue(permit) { () -> (Bool, Bool, Bool) in
            let nested = InPlaceLookup.$permit.withValue(nil) { InPlaceLookup.isPermitted }
            // Another thread holding the very same permit is not covered by it.
            let seen = Mutex(true)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                InPlaceLookup.$permit.withValue(permit) { seen.withLock { $0 = InPlaceLookup.isPermitted } }
                done.signal()
            }
            done.wait()
            return (InPlaceLookup.isPermitted, nested, seen.withLock { $0 })
        }
        #expect(inside)
        #expect(!nested)
        #expect(!otherThread)
        #expect(!InPlaceLookup.isPermitted)
    }

    /// A task started inside the binding inherits the permit; after it suspends and resumes on the
    /// cooperative pool the permit is still bound but no longer applies.
    @Test func taskInheritsThePermitButLosesItAfterSuspending() async {
        let observed = Observed()
        // A thread of our own stands in for an event loop's (no task runs on it, and it is never a pool thread).
        // It lives until the task has reported, as a loop's thread lives for the process: a thread that exited
        // could have its id reused by a pool thread.
        Thread.detachNewThread {
            Self.startTask(reportingTo: observed)
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
        #expect(result?.bound == true)
    }

    private static func startTask(reportingTo observed: Observed) {
        InPlaceLookup.$permit.withValue(CurrentThreadPermit()) {
            Task.immediate {
                let before = InPlaceLookup.isPermitted
                try? await Task.sleep(for: .milliseconds(1))
                let after = InPlaceLookup.isPermitted
                let bound = InPlaceLookup.permit != nil
                observed.value.withLock { $0 = (before, after, bound) }
            }
        }
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
