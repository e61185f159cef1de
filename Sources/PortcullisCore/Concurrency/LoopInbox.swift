import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What other threads hand a loop thread of our own — jobs, resumed tasks, a request to stop — and whether it
/// must be woken for them: the one hand-over of the process's epoll loops (the HTTP loops, an upstream client's
/// own thread). The wake-up itself is the loop's (an `eventfd` write), given as `wake`.
///
/// Protocol of the loop thread: `take` the work, do it, then `prepareToSleep`; when that says block, wait with a
/// timeout, then `awoke`. A hand-over between `prepareToSleep` and the wait finds `sleeping` set and wakes the
/// loop, so nothing waits out a whole timeout.
public final class LoopInbox: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        /// Async work resuming on the loop (a task executor's `enqueue`): kept apart from `jobs` so a resumption
        /// costs no closure.
        var tasks: [UnownedJob] = []
        /// The loop is in (or about to enter) a blocking wait: the next hand-over must wake it.
        var sleeping = false
        var stopRequested = false
    }

    private let state = Mutex(State())
    private let wake: @Sendable () -> Void

    public init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    // MARK: any thread

    /// Hands `job` to the loop; wakes it if it waits.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        handOver { $0.jobs.append(job) }
    }

    /// Hands a resumed task to the loop; wakes it if it waits.
    public func enqueue(_ task: UnownedJob) {
        handOver { $0.tasks.append(task) }
    }

    /// Asks the loop to leave once it is idle (`prepareToSleep`'s `exit`).
    public func requestStop() {
        handOver { $0.stopRequested = true }
    }

    private func handOver(_ change: (inout State) -> Void) {
        let wakeNeeded = state.withLock { state -> Bool in
            change(&state)
            guard state.sleeping else { return false }
            state.sleeping = false
            return true
        }
        if wakeNeeded { wake() }
    }

    // MARK: the loop thread

    /// Swaps what was handed over into `jobs` and `tasks` (empty arrays, kept for their capacity).
    public func take(_ jobs: inout [@Sendable () -> Void], _ tasks: inout [UnownedJob]) {
        state.withLock {
            swap(&$0.jobs, &jobs)
            swap(&$0.tasks, &tasks)
        }
    }

    /// Whether the loop may block in its wait (nothing was handed over since `take`), and whether it should
    /// leave instead: a stop was requested and the loop says it is `idle`.
    public func prepareToSleep(idle: Bool) -> (block: Bool, exit: Bool) {
        state.withLock { state -> (Bool, Bool) in
            guard state.jobs.isEmpty && state.tasks.isEmpty else { return (false, false) }
            if state.stopRequested && idle { return (false, true) }
            state.sleeping = true
            return (true, false)
        }
    }

    /// The blocking wait is over.
    public func awoke() {
        state.withLock { $0.sleeping = false }
    }
}

#if os(Linux)
/// Starting the thread of a loop of our own.
public enum LoopThread {
    /// Runs `body` on a new detached thread. `body` holds what it captures until it returns.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { context in
                let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
                box.body()
                return nil
            }, context)
        precondition(result == 0, "cannot start an event loop thread: \(result)")
        pthread_detach(handle)
    }
}
#endif
