import PortcullisCore
import Synchronization

/// Per-backend circuit breaker: `threshold` consecutive failures open the circuit; while open, calls fail
/// fast with the seconds left; after `cooldown` one probe is let through (half-open): its success closes the
/// circuit, its failure re-opens it for another cooldown.
///
/// Thread-safe; `now` is injectable so tests drive it with a fake clock.
final class CircuitBreaker: Sendable {
    enum State: Equatable {
        case closed(failures: Int)
        case open(until: UInt64)
        case halfOpen(probeInFlight: Bool)
    }

    /// What the caller may do.
    enum Admission: Equatable {
        case allowed
        /// Allowed as the single half-open probe: report its outcome.
        case probe
        case rejected(retryAfterSeconds: Int)
    }

    private let threshold: Int
    private let cooldownNanoseconds: UInt64
    private let now: @Sendable () -> UInt64
    private let state = Mutex<[String: State]>([:])

    init(threshold: Int, cooldown: Double, now: @escaping @Sendable () -> UInt64 = MonotonicClock.nanoseconds) {
        self.threshold = max(1, threshold)
        self.cooldownNanoseconds = UInt64(max(0, cooldown) * 1e9)
        self.now = now
    }

    func admit(_ key: String) -> Admission {
        let t = now()
        return state.withLock { states in
            switch states[key] ?? .closed(failures: 0) {
            case .closed:
                return .allowed
            case .open(let until) where t < until:
                return .rejected(retryAfterSeconds: Int((until - t + 999_999_999) / 1_000_000_000))
            case .open:
                states[key] = .halfOpen(probeInFlight: true)
                return .probe
            case .halfOpen(let inFlight):
                if inFlight { return .rejected(retryAfterSeconds: 1) }
                states[key] = .halfOpen(probeInFlight: true)
                return .probe
            }
        }
    }

    func recordSuccess(_ key: String) {
        state.withLock { $0[key] = .closed(failures: 0) }
    }

    func recordFailure(_ key: String) {
        let t = now()
        state.withLock { states in
            switch states[key] ?? .closed(failures: 0) {
            case .closed(let failures):
                states[key] =
                    failures + 1 >= threshold
                    ? .open(until: t + cooldownNanoseconds)
                    : .closed(failures: failures + 1)
            case .halfOpen, .open:
                states[key] = .open(until: t + cooldownNanoseconds)
            }
        }
    }

    /// A probe that ended without a verdict (cancelled by its caller) frees the half-open slot.
    func recordNeutral(_ key: String) {
        state.withLock { states in
            if case .halfOpen = states[key] { states[key] = .halfOpen(probeInFlight: false) }
        }
    }

    /// Whether calls to `key` are currently let through (closed, or due for a probe).
    func isAvailable(_ key: String) -> Bool {
        let t = now()
        return state.withLock { states in
            switch states[key] ?? .closed(failures: 0) {
            case .closed: true
            case .open(let until): t >= until
            case .halfOpen: false
            }
        }
    }

    func snapshot() -> [String: State] { state.withLock { $0 } }
}
