import Dispatch
public import PortcullisCore

/// The dispatcher's time: what time it is, and a one-shot wake-up at a given time. Injected, so the delivery
/// engine is tested on a manual clock without sleeping.
public protocol EventClock: Sendable {
    func now() -> Timestamp
    /// Calls `action` once, at or after `deadline`.
    func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void)
}

/// Wall-clock time; wake-ups on a Dispatch timer.
public struct SystemEventClock: EventClock {
    public init() {}

    public func now() -> Timestamp { .now() }

    public func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) {
        let delay = max(0, deadline.nanosecondsSinceEpoch - Timestamp.now().nanosecondsSinceEpoch)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(Int(delay)), execute: action)
    }
}
