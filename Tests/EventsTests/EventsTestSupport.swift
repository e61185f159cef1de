import Events
import PortcullisCore
import Synchronization

/// A clock that moves only when told to; scheduled wake-ups fire when it passes them.
final class ManualClock: EventClock {
    private let state: Mutex<(now: Timestamp, timers: [(Timestamp, @Sendable () -> Void)])>

    init(_ start: Timestamp = Timestamp(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)) {
        state = Mutex((start, []))
    }

    func now() -> Timestamp { state.withLock { $0.now } }

    func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) {
        let fireNow = state.withLock { state -> Bool in
            if deadline <= state.now { return true }
            state.timers.append((deadline, action))
            return false
        }
        if fireNow { action() }
    }

    func advance(by duration: Duration) {
        let due = state.withLock { state -> [@Sendable () -> Void] in
            state.now = state.now.adding(duration)
            let now = state.now
            let due = state.timers.filter { $0.0 <= now }.map(\.1)
            state.timers.removeAll { $0.0 <= now }
            return due
        }
        for action in due { action() }
    }

    var pendingTimers: Int { state.withLock { $0.timers.count } }
}

/// A transport that records every request and answers from a script (default: 200).
final class ScriptedTransport: WebhookTransport {
    private let state = Mutex<(sent: [WebhookRequest], script: [DeliveryOutcome])>(([], []))
    private let answer: @Sendable (WebhookRequest, Int) -> DeliveryOutcome

    /// `answer(request, index)`: the outcome of the index-th request (0-based, over all requests).
    init(answer: @escaping @Sendable (WebhookRequest, Int) -> DeliveryOutcome = { _, _ in .acknowledged(status: 200) })
    {
        self.answer = answer
    }

    func post(_ request: WebhookRequest) async -> DeliveryOutcome {
        let index = state.withLock { state -> Int in
            state.sent.append(request)
            return state.sent.count - 1
        }
        return answer(request, index)
    }

    var sent: [WebhookRequest] { state.withLock { $0.sent } }

    /// `ce-id` of each request sent, in order.
    var sentIDs: [String] { sent.map { $0.header("ce-id") ?? "?" } }
}

/// A transport whose requests hang until released (a stalled receiver).
final class StalledTransport: WebhookTransport {
    private struct State {
        var held: [CheckedContinuation<DeliveryOutcome, Never>] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    func post(_ request: WebhookRequest) async -> DeliveryOutcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.held.append(continuation)
                let count = state.held.count
                let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
                state.watchers.removeAll { $0.count <= count }
                return ready
            }
            for watcher in ready { watcher.resume() }
        }
    }

    /// Returns once `count` requests are being held.
    func waitUntilWaiting(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.held.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    func releaseAll(with outcome: DeliveryOutcome = .acknowledged(status: 200)) {
        let all = state.withLock { state -> [CheckedContinuation<DeliveryOutcome, Never>] in
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in all { continuation.resume(returning: outcome) }
    }
}

extension WebhookRequest {
    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
}

func event(
    _ id: String, _ name: String, kind: ChangeKind = .finalized, bucket: String = "b",
    at time: Timestamp = Timestamp(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
) -> ChangeEvent {
    ChangeEvent(id: id, kind: kind, bucket: bucket, name: name, time: time, body: Array(#"{"name":"\#(name)"}"#.utf8))
}

extension MetricsRegistry {
    /// The value of one sample line (`name{labels} value`) in the rendered registry.
    func sample(_ series: String) -> Double? {
        for line in render().split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
