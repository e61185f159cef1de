import Synchronization
import Testing

@testable import Upstream

@Suite struct CircuitBreakerTests {
    @Test func opensAfterThresholdAndProbesAfterCooldown() {
        let clock = Atomic<UInt64>(1_000_000_000)
        let breaker = CircuitBreaker(threshold: 3, cooldown: 2, now: { clock.load(ordering: .relaxed) })
        for _ in 0..<2 { breaker.recordFailure("b") }
        #expect(breaker.admit("b") == .allowed)
        breaker.recordFailure("b")
        #expect(breaker.admit("b") == .rejected(retryAfterSeconds: 2))
        clock.add(2_000_000_000, ordering: .relaxed)
        #expect(breaker.admit("b") == .probe)
        #expect(breaker.admit("b") == .rejected(retryAfterSeconds: 1))  // one probe at a time
        breaker.recordFailure("b")
        #expect(breaker.admit("b") == .rejected(retryAfterSeconds: 2))
        clock.add(2_000_000_000, ordering: .relaxed)
        #expect(breaker.admit("b") == .probe)
        breaker.recordSuccess("b")
        #expect(breaker.admit("b") == .allowed)
        #expect(breaker.admit("other") == .allowed)
    }

    @Test func successResetsTheFailureCount() {
        let breaker = CircuitBreaker(threshold: 2, cooldown: 10)
        breaker.recordFailure("b")
        breaker.recordSuccess("b")
        breaker.recordFailure("b")
        #expect(breaker.admit("b") == .allowed)
    }
}
