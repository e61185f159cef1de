import Dispatch
import PortcullisCore

/// One serial "event loop" queue and the deadlines of the connections that live on it.
///
/// Every connection of the loop uses `queue` as its own serial queue, so everything here is confined to it
/// (hence `@unchecked Sendable`). Instead of a timer source per connection (~330 bytes per idle keep-alive
/// connection with its handler, bench S7), one timer per loop fires at the earliest deadline of its
/// connections and lets each connection check its own. Firings are at least `coalescing` apart, so a burst
/// of deadlines costs a few sweeps, not one per connection; a deadline is therefore met up to that late.
final class EventLoop: @unchecked Sendable {
    let queue: DispatchQueue
    private let timer: any DispatchSourceTimer
    private var connections: [ObjectIdentifier: HTTPConnection] = [:]
    /// When the timer is set to fire; re-armed only when a deadline moves earlier.
    private var firesAt: UInt64 = .max
    private let coalescing: UInt64

    init(label: String, coalescing: UInt64 = 10_000_000) {
        queue = DispatchQueue(label: label, target: .global())
        self.coalescing = coalescing
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in self.sweep() }
        timer.schedule(deadline: .distantFuture)
        timer.activate()
    }

    deinit { timer.cancel() }

    /// Starts watching a connection's deadlines. On `queue`.
    func add(_ connection: HTTPConnection) {
        connections[ObjectIdentifier(connection)] = connection
    }

    /// Stops watching a connection (it is closing). On `queue`.
    func remove(_ connection: HTTPConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }

    /// A connection's earliest deadline is now `deadline` (monotonic nanoseconds). On `queue`.
    func deadlineChanged(_ deadline: UInt64) {
        guard deadline < firesAt else { return }
        schedule(deadline)
    }

    private func schedule(_ deadline: UInt64) {
        firesAt = deadline
        guard deadline != .max else {
            timer.schedule(deadline: .distantFuture)
            return
        }
        let now = MonotonicClock.nanoseconds()
        timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: deadline > now ? deadline - now : 0)))
    }

    private func sweep() {
        let now = MonotonicClock.nanoseconds()
        firesAt = .max
        var next = UInt64.max
        // Iterates a snapshot: a connection that closes while checked removes itself from the live table.
        for connection in connections.values {
            next = min(next, connection.checkDeadlines(now: now))
        }
        schedule(next == .max ? .max : max(next, now &+ coalescing))
    }
}
