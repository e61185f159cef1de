import Synchronization

/// Async work started from a connection's event loop by `AsyncBridge`.
///
/// A value type so that the bridge stores it inline: the bridge is then the task's only capture, and starting
/// the work costs the task and the bridge — no closure contexts.
protocol BridgedWork: Sendable {
    associatedtype Result: Sendable
    /// The work. Begins synchronously on the loop's thread (see `AsyncBridge`).
    func run() async -> Result
    /// Receives the result on the loop when `run` suspended; called at most once, and never when the result was
    /// returned inline by `AsyncBridge.start`.
    func deliver(_ result: Result)
}

/// `BridgedWork` from two closures, for callers off the per-request path.
struct ClosureWork<Value: Sendable>: BridgedWork {
    let operation: @Sendable () async -> Value
    let delivery: @Sendable (Value) -> Void

    func run() async -> Value { await operation() }
    func deliver(_ result: Value) { delivery(result) }
}

/// The bridge from a connection's event loop into async code and back.
///
/// `start` runs the work as an immediate task (`Task.immediate`): it begins synchronously on the calling
/// thread — the connection's loop — and, when it finishes without ever suspending (a canned response, a
/// chunk already in memory), its result is returned to the caller directly: no thread hop at all, which is
/// what keeps small responses cheap. When it does suspend, it resumes on the loop's task executor (the epoll
/// driver's loop itself: an upstream answer or a blob read comes back to this thread, not to Swift's global
/// executor and then here) or, without one, on the global executor; its result is delivered on the loop, at
/// once when it finished there, else with `loop.execute`. Exactly one of the two paths delivers the result.
///
/// Consequence for responders: the code before a responder's first `await` runs on the connection's
/// loop, so it must not block (the same rule as for the cooperative pool) — except for the brief, bounded
/// calls the loop's permit allows (`ExchangeLoop.inPlacePermit`, passed down explicitly from the request).
final class AsyncBridge<Work: BridgedWork>: Sendable {
    private enum State: Sendable {
        case starting
        case finishedInline(Work.Result)
        case detached
    }

    private let work: Work
    private let loop: any EventLoop
    private let state = Mutex(State.starting)

    private init(work: Work, loop: any EventLoop) {
        self.work = work
        self.loop = loop
    }

    /// Starts `work`. Returns the task (for cancellation) and, when it completed synchronously, its result;
    /// otherwise `work.deliver` is called later on `loop`.
    static func start(on loop: any EventLoop, _ work: Work) -> (task: Task<Void, Never>, inline: Work.Result?) {
        let bridge = AsyncBridge(work: work, loop: loop)
        let task = Task.immediate(executorPreference: loop.taskExecutor) { await bridge.run() }
        let inline = bridge.state.withLock { state -> Work.Result? in
            if case .finishedInline(let result) = state { return result }
            state = .detached
            return nil
        }
        return (task, inline)
    }

    /// `start` with the work given as two closures.
    static func start<Value>(
        on loop: any EventLoop,
        _ operation: @escaping @Sendable () async -> Value,
        deliver: @escaping @Sendable (Value) -> Void
    ) -> (task: Task<Void, Never>, inline: Value?) where Work == ClosureWork<Value> {
        start(on: loop, ClosureWork(operation: operation, delivery: deliver))
    }

    private func run() async {
        let result = await work.run()
        let handedInline = state.withLock { state -> Bool in
            if case .starting = state {
                state = .finishedInline(result)
                return true
            }
            return false
        }
        guard !handedInline else { return }
        // Resumed on the loop itself (its task executor): deliver now rather than a turn later.
        if loop.coversCurrentThread {
            work.deliver(result)
        } else {
            loop.execute { self.work.deliver(result) }
        }
    }
}
