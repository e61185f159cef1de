public import PortcullisCore

/// When a failed delivery is tried again, and when it is given up (docs/events.md): exponential backoff from
/// `initialDelay`, doubling up to `maxDelay`, with jitter; dead-lettered once the next attempt would fall
/// beyond `maxAge` after the delivery's retry window opened. Each attempt may take `attemptTimeout`.
public struct RetryPolicy: Sendable, Equatable {
    public var initialDelay: Duration
    public var maxDelay: Duration
    public var maxAge: Duration
    public var attemptTimeout: Duration
    /// The share of each delay that jitter may remove (0…1): with 0.5, the n-th retry waits between half and
    /// all of its nominal delay, so retries of many events spread out but still grow.
    public var jitterFraction: Double

    public static let standard = RetryPolicy(
        initialDelay: .seconds(1), maxDelay: .seconds(300),
        maxAge: .seconds(24 * 3600), attemptTimeout: .seconds(10),
        jitterFraction: 0.5)

    public init(
        initialDelay: Duration, maxDelay: Duration, maxAge: Duration, attemptTimeout: Duration,
        jitterFraction: Double
    ) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxAge = maxAge
        self.attemptTimeout = attemptTimeout
        self.jitterFraction = min(1, max(0, jitterFraction))
    }

    /// The nominal delay after `failures` failed attempts (1 → `initialDelay`, doubling, capped).
    public func nominalDelay(afterFailures failures: Int) -> Duration {
        let exponent = min(max(failures - 1, 0), 40)
        let initial = initialDelay.totalNanoseconds
        let cap = maxDelay.totalNanoseconds
        let (scaled, overflow) = initial.multipliedReportingOverflow(by: Int64(1) << Int64(exponent))
        return .nanoseconds(overflow ? cap : min(scaled, cap))
    }

    /// The delay after `failures` failed attempts, with `jitter` in 0..<1 taking up to `jitterFraction` of it.
    public func delay(afterFailures failures: Int, jitter: Double) -> Duration {
        let nominal = Double(nominalDelay(afterFailures: failures).totalNanoseconds)
        let clamped = min(max(jitter, 0), 1)
        return .nanoseconds(Int64(nominal * (1 - jitterFraction * clamped)))
    }

    /// The last moment an attempt may be scheduled for a window opened at `windowStart`.
    public func deadline(windowStart: Timestamp) -> Timestamp {
        windowStart.adding(maxAge)
    }
}
