import Foundation
import PortcullisCore
import Testing

@testable import Upstream

/// `UpstreamConfiguration.requestDeadline`: one `send` waits no longer than the deadline in total, across its
/// attempts and the backoff between them, against a real slow server. Durations are short and the upper bounds
/// loose (a loaded CI machine delays every wake-up), but each bound sits well below what the same call takes
/// without the deadline.
@Suite struct UpstreamDeadlineTests {
    /// Timed-out attempts of `backend` as the client counted them (the server may not see every attempt on a
    /// loaded machine before the client gives up on it). An attempt is counted when its transfer ends, just after
    /// `send` learns of it, so this polls (bounded) until `atLeast` attempts are in.
    private func timedOutAttempts(_ metrics: MetricsRegistry, backend: String, atLeast: Double) async throws -> Double {
        let prefix = "portcullis_upstream_requests_total{backend=\"\(backend)\",op=\"get\",status=\"timeout\"}"
        func count() -> Double {
            let line = metrics.render().split(separator: "\n").first { $0.hasPrefix(prefix) }
            return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        }
        try await waitUntil { count() >= atLeast }
        return count()
    }

    @Test func retriesOfASlowUpstreamEndAtTheDeadline() async throws {
        let server = try await TestServer.start()
        // Three attempts of 10 s each would take 30 s and more; the 1.5 s deadline ends the call after the first
        // attempt's wait is cut (and before any backoff could start another).
        let metrics = MetricsRegistry()
        let client = UpstreamClient(
            configuration: .init(maxAttempts: 3, baseBackoff: 0.01, requestDeadline: 1.5),
            metrics: metrics)
        let start = Date()
        await #expect(throws: UpstreamError.timedOut(.firstByte)) {
            _ = try await client.send(
                UpstreamRequest(
                    url: "\(server.base)/slowhead?s=60", timeouts: .init(firstByte: 10),
                    backend: "cut", operation: "get"))
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 1.4)
        #expect(elapsed < 15, "took \(elapsed) s")
        #expect(try await timedOutAttempts(metrics, backend: "cut", atLeast: 1) == 1)
    }

    @Test func shortAttemptsAreRetriedUntilTheDeadline() async throws {
        let server = try await TestServer.start()
        // 0.5 s attempts, sixty allowed: without the deadline about 30 s; with it about 3 s and a few attempts.
        let metrics = MetricsRegistry()
        let client = UpstreamClient(
            configuration: .init(
                maxAttempts: 60, baseBackoff: 0.01, maxBackoff: 0.01,
                breakerThreshold: 100, requestDeadline: 3),
            metrics: metrics)
        let start = Date()
        await #expect(throws: UpstreamError.timedOut(.firstByte)) {
            _ = try await client.send(
                UpstreamRequest(
                    url: "\(server.base)/slowhead?s=30", timeouts: .init(firstByte: 0.5),
                    backend: "slow", operation: "get"))
        }
        // One 0.5 s attempt alone would end long before 3 s: the client kept retrying up to the deadline.
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 2.9)
        #expect(elapsed < 15, "took \(elapsed) s")
        // About six on an idle machine; fewer when a saturated one stretches an attempt.
        let attempts = try await timedOutAttempts(metrics, backend: "slow", atLeast: 1)
        #expect(attempts <= 7, "\(attempts) attempts")
    }

    @Test func aDisabledFirstByteLimitIsStillBoundedByTheDeadline() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient(configuration: .init(requestDeadline: 1))
        let start = Date()
        await #expect(throws: UpstreamError.timedOut(.firstByte)) {
            _ = try await client.send(
                UpstreamRequest(
                    url: "\(server.base)/slowhead?s=30",
                    timeouts: .init(firstByte: nil, idle: nil)))
        }
        #expect(Date().timeIntervalSince(start) < 20)
    }

    @Test func aBackoffLongerThanTheTimeLeftEndsTheRetriesWithTheLastAnswer() async throws {
        let server = try await TestServer.start()
        // The upstream asks for 20 s before a retry; 1 s is left: the 503 is the answer, at once.
        let client = UpstreamClient(configuration: .init(maxBackoff: 30, requestDeadline: 1))
        let start = Date()
        let answer = try await client.fetch(
            UpstreamRequest(url: "\(server.base)/status?code=503&retry_after=20"),
            maxBytes: 100)
        #expect(answer.status == 503)
        #expect(Date().timeIntervalSince(start) < 15)
    }

    @Test func aRefusedConnectionIsStillReportedAsSuch() async throws {
        // The deadline changes when retries stop, not what the caller learns: a dead upstream is a connect
        // failure (502/503 upstream of the gateway), not a timeout.
        let client = UpstreamClient(
            configuration: .init(
                maxAttempts: 50, baseBackoff: 0.05, maxBackoff: 0.05,
                breakerThreshold: 1000, requestDeadline: 0.5))
        do {
            _ = try await client.send(UpstreamRequest(url: "http://127.0.0.1:\(closedPort())/x"))
            Issue.record("expected a failure")
        } catch {
            guard case .connectFailed = error else { Issue.record("got \(error)"); return }
        }
    }

    /// The first attempt gets an empty reply (the upstream's own failure), the next one waits until the deadline,
    /// which had capped its first-byte wait: the caller learns the empty reply, not the deadline's timeout.
    @Test func aWaitTheDeadlineCutShortDoesNotHideTheFailureBeforeIt() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient(
            configuration: .init(
                maxAttempts: 50, baseBackoff: 0.05, maxBackoff: 0.05, breakerThreshold: 1000, requestDeadline: 1))
        do {
            _ = try await client.send(UpstreamRequest(url: "\(server.base)/dropthenhang?key=\(UUID().uuidString)"))
            Issue.record("expected a failure")
        } catch {
            if case .timedOut = error { Issue.record("the deadline's timeout hid the upstream's failure: \(error)") }
        }
    }

    @Test func bodiesAreNotCutByTheDeadline() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient(configuration: .init(requestDeadline: 0.3))
        let size = 4 << 20
        let response = try await client.send(UpstreamRequest(url: "\(server.base)/bytes?n=\(size)"))
        var received = 0
        let start = Date()
        while let chunk = try await response.body.next(maxLength: 256 * 1024) {
            received += chunk.count
            // A slow reader: the body takes well over the deadline to arrive.
            if Date().timeIntervalSince(start) < 0.8 { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        #expect(received == size)
        #expect(Date().timeIntervalSince(start) >= 0.6)
    }
}
