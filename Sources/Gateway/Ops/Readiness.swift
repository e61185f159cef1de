public import PortcullisCore
import Synchronization

/// Whether this instance should receive traffic (`/readyz`): only after start-up finished, not while draining,
/// and only while every backend says it can serve.
///
/// Backend readiness is probed at most once per `probeInterval` (default 1 s) and cached, so a load balancer
/// polling `/readyz` many times a second costs one probe per interval.
///
/// With a registry, the answers are metrics: `portcullis_ready` is the last answer (1 ready, 0 not; 0 before
/// the first check) and `portcullis_readiness_changes_total` counts every change of answer, so flapping
/// between two scrapes is still seen.
public final class Readiness: Sendable {
    public enum Phase: UInt8, Sendable {
        case starting, serving, draining
    }

    private let phaseValue = Atomic<UInt8>(Phase.starting.rawValue)
    private let probe: @Sendable () async -> Bool
    private let probeIntervalNanos: UInt64
    private let cached = Mutex<(checkedAt: UInt64, ready: Bool)?>(nil)
    private let lastAnswer = Atomic<Bool>(false)
    private let changes: Counter?

    /// `probe` answers whether every backend is ready (e.g. all `StorageBackend.isReady()`).
    public init(
        probeInterval: Duration = .seconds(1), metrics: MetricsRegistry? = nil,
        probe: @escaping @Sendable () async -> Bool = { true }
    ) {
        self.probe = probe
        changes = metrics?.counter(
            "portcullis_readiness_changes_total", help: "Changes of the /readyz answer (ready to not ready or back)."
        ).labels([])

        let (seconds, attoseconds) = probeInterval.components
        probeIntervalNanos = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        metrics?.gauge("portcullis_ready", help: "The last /readyz answer: 1 ready, 0 not ready.") { [self] in
            lastAnswer.load(ordering: .relaxed) ? 1 : 0
        }
    }

    public var phase: Phase { Phase(rawValue: phaseValue.load(ordering: .acquiring)) ?? .starting }

    /// Start-up is complete: the listener is accepting.
    public func markServing() {
        _ = phaseValue.compareExchange(
            expected: Phase.starting.rawValue, desired: Phase.serving.rawValue,
            ordering: .acquiringAndReleasing)
    }

    /// Shutdown began; readiness stays 503 from now on.
    public func markDraining() { phaseValue.store(Phase.draining.rawValue, ordering: .releasing) }

    /// Whether `/readyz` should answer 200, and why not when it should not.
    public func check() async -> (ready: Bool, reason: String?) {
        let answer = await decide()
        if lastAnswer.exchange(answer.ready, ordering: .relaxed) != answer.ready { changes?.increment() }
        return answer
    }

    private func decide() async -> (ready: Bool, reason: String?) {
        switch phase {
        case .starting: return (false, "starting")
        case .draining: return (false, "draining")
        case .serving: break
        }
        let now = MonotonicClock.nanoseconds()
        if let hit = cached.withLock({ $0 }), now &- hit.checkedAt < probeIntervalNanos {
            return hit.ready ? (true, nil) : (false, "backend not ready")
        }
        let ready = await probe()
        cached.withLock { $0 = (MonotonicClock.nanoseconds(), ready) }
        return ready ? (true, nil) : (false, "backend not ready")
    }
}
