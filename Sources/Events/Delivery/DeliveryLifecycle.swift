public import PortcullisCore

/// What one attempt to POST an event ended with.
public enum DeliveryOutcome: Sendable, Equatable {
    /// A 2xx answer: the receiver has the event.
    case acknowledged(status: Int)
    /// Any other status.
    case rejected(status: Int)
    /// No answer: connection refused or reset, timeout, TLS failure; the text says which.
    case failed(String)

    /// A short text for logs and the outbox's `last_error`.
    public var summary: String {
        switch self {
        case .acknowledged(let status): "HTTP \(status)"
        case .rejected(let status): "HTTP \(status)"
        case .failed(let reason): reason
        }
    }
}

/// The lifecycle of one delivery (one event to one webhook) as a pure state machine (docs/events.md):
///
/// ```
///  due ──start──▶ sending ──2xx──────────────────────────▶ acknowledged
///   ▲                │
///   │                └──other status / error / timeout──▶ waiting(until) ──(time passes, claimed again)──▶ due
///   │                                              └─── beyond the retry window ──▶ deadLettered
/// ```
///
/// The dispatcher builds one from a ledger claim (which carries the attempts so far and the window's start),
/// calls `start` before the POST and `finished` with its outcome, and performs the returned action on the
/// ledger. Time and jitter come in as arguments, so tests drive it without clocks or randomness.
public struct DeliveryLifecycle: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case due
        case sending(since: Timestamp)
        case acknowledged
        case waiting(until: Timestamp)
        case deadLettered(reason: String)
    }

    /// What the dispatcher must do next.
    public enum Action: Sendable, Equatable {
        /// POST the event, giving up after `timeout`.
        case send(timeout: Duration)
        /// Tell the ledger the delivery is done; `latency` is commit → acknowledgement.
        case acknowledge(latency: Duration)
        /// Tell the ledger to offer the delivery again at `at`.
        case retry(at: Timestamp, reason: String)
        /// Tell the ledger to keep the delivery as dead-lettered; log and count it once.
        case deadLetter(reason: String)
        /// Nothing (an event that does not fit the state, which the machine ignores).
        case none
    }

    public private(set) var state: State = .due
    /// Failed attempts so far, including any made before this claim.
    public private(set) var failedAttempts: Int
    public let committedAt: Timestamp
    public let windowStart: Timestamp
    public let policy: RetryPolicy

    public init(failedAttempts: Int, committedAt: Timestamp, windowStart: Timestamp, policy: RetryPolicy) {
        self.failedAttempts = failedAttempts
        self.committedAt = committedAt
        self.windowStart = windowStart
        self.policy = policy
    }

    public init(claim: DeliveryClaim, policy: RetryPolicy) {
        self.init(
            failedAttempts: claim.failedAttempts, committedAt: claim.event.time, windowStart: claim.windowStart,
            policy: policy)
    }

    /// An attempt begins at `now`.
    public mutating func start(now: Timestamp) -> Action {
        guard state == .due else { return .none }
        state = .sending(since: now)
        return .send(timeout: policy.attemptTimeout)
    }

    /// The attempt ended at `now` with `outcome`; `jitter` in 0..<1 spreads the retry.
    public mutating func finished(_ outcome: DeliveryOutcome, now: Timestamp, jitter: Double) -> Action {
        guard case .sending = state else { return .none }
        if case .acknowledged = outcome {
            state = .acknowledged
            return .acknowledge(
                latency: .nanoseconds(max(0, now.nanosecondsSinceEpoch - committedAt.nanosecondsSinceEpoch)))
        }
        failedAttempts += 1
        let retryAt = now.adding(policy.delay(afterFailures: failedAttempts, jitter: jitter))
        if retryAt > policy.deadline(windowStart: windowStart) {
            let reason = "\(outcome.summary) after \(failedAttempts) attempts"
            state = .deadLettered(reason: reason)
            return .deadLetter(reason: reason)
        }
        state = .waiting(until: retryAt)
        return .retry(at: retryAt, reason: outcome.summary)
    }
}
