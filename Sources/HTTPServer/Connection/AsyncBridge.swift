import Synchronization

/// The bridge from a connection's event loop into async code and back.
///
/// `start` runs `operation` as an immediate task (`Task.immediate`): it begins synchronously on the calling
/// thread — the connection's loop — and, when it finishes without ever suspending (a canned response, a
/// chunk already in memory), its result is returned to the caller directly: no thread hop at all, which is
/// what keeps small responses cheap. When it does suspend, it continues on Swift's global executor and its
/// result is delivered with `loop.execute` instead. Exactly one of the two paths delivers the result.
///
/// Consequence for responders: the code before a responder's first `await` runs on the connection's
/// loop, so it must not block (the same rule as for the cooperative pool) — except for the brief, bounded
/// calls `InPlaceLookup` allows: `HTTPConnection` starts the responder with the loop's permit bound.
final class AsyncBridge<Result: Sendable>: Sendable {
    private enum State: Sendable {
        case starting
        case finishedInline(Result)
        case detached
    }

    private let state = Mutex(State.starting)

    private init() {}

    /// Starts `operation`. Returns the task (for cancellation) and, when it completed synchronously, its
    /// result; otherwise `deliver` is called later on `loop`.
    static func start(
        on loop: any EventLoop,
        _ operation: @escaping @Sendable () async -> Result,
        deliver: @escaping @Sendable (Result) -> Void
    ) -> (task: Task<Void, Never>, inline: Result?) {
        let bridge = AsyncBridge<Result>()
        let task = Task.immediate {
            let result = await operation()
            let handedInline = bridge.state.withLock { state -> Bool in
                if case .starting = state {
                    state = .finishedInline(result)
                    return true
                }
                return false
            }
            if !handedInline { loop.execute { deliver(result) } }
        }
        let inline = bridge.state.withLock { state -> Result? in
            if case .finishedInline(let result) = state { return result }
            state = .detached
            return nil
        }
        return (task, inline)
    }
}
