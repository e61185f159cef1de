import Foundation
import PortcullisCore
import Testing

@testable import Upstream

@Suite struct UpstreamFaultTests {
    @Test func slowConsumerPausesTheTransferWithBoundedBuffering() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let size = 8 << 20
        let response = try await client.send(
            UpstreamRequest(
                url: "\(server.base)/bytes?n=\(size)",
                timeouts: .init(idle: 1)))
        let body = try #require(response.body as? UpstreamBody)
        #expect(body.expectedLength == Int64(size))
        var received = 0
        var maxBuffered = 0
        var pausedLongerThanIdle = false
        while let chunk = try await body.next(maxLength: 32 * 1024) {
            #expect(chunk == expectedPattern(chunk.count, offset: received))
            received += chunk.count
            maxBuffered = max(maxBuffered, body.bufferedBytes)
            if received > 1 << 20 && !pausedLongerThanIdle {
                // Stall longer than the idle timeout: a transfer we paused must not time out.
                try await Task.sleep(nanoseconds: 2_200_000_000)
                pausedLongerThanIdle = true
            } else if received % (1 << 20) < 32 * 1024 {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }
        #expect(received == size)
        #expect(maxBuffered <= 256 * 1024 + 64 * 1024)
        try await waitUntil { client.activeTransfers == 0 }
    }

    @Test func aSlowConsumerIsHeldToHalfTheBuffer() async throws {
        // 16 KiB every 5 ms: always slower than the loopback upstream, never running dry after a pause, so the
        // window stays at half of `responseBufferBytes` (the S11 case: many slow clients, bounded memory each).
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let size = 2 << 20
        let response = try await client.send(UpstreamRequest(url: "\(server.base)/bytes?n=\(size)"))
        let body = try #require(response.body as? UpstreamBody)
        var received = 0
        var maxBuffered = 0
        while let chunk = try await body.next(maxLength: 16 * 1024) {
            #expect(chunk == expectedPattern(chunk.count, offset: received))
            received += chunk.count
            maxBuffered = max(maxBuffered, body.bufferedBytes)
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(received == size)
        #expect(maxBuffered > 0)
        #expect(maxBuffered <= UpstreamConfiguration().responseBufferBytes / 2)
    }

    @Test func cancellingTheBodyAbortsTheTransfer() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let response = try await client.send(UpstreamRequest(url: "\(server.base)/bytes?n=\(100 << 20)"))
        _ = try await response.body.next(maxLength: 1024)
        #expect(client.activeTransfers == 1)
        response.body.cancel()
        try await waitUntil { client.activeTransfers == 0 }
        await #expect(throws: ByteStreamError.cancelled) { _ = try await response.body.next(maxLength: 10) }
    }

    @Test func aThousandDisconnectsMidStreamLeakNoTransfers() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<10 {
                group.addTask {
                    for _ in 0..<100 {
                        let response = try await client.send(UpstreamRequest(url: "\(server.base)/bytes?n=\(1 << 20)"))
                        _ = try await response.body.next(maxLength: 16 * 1024)
                        if worker % 2 == 0 { response.body.cancel() }  // the others just drop the body
                    }
                }
            }
            try await group.waitForAll()
        }
        try await waitUntil { client.activeTransfers == 0 }
        #expect(client.activeTransfers == 0)
    }

    @Test func upstreamCuttingTheBodyIsATruncationNotACleanEnd() async throws {
        let server = try await TestServer.start()
        let metrics = MetricsRegistry()
        let client = UpstreamClient(metrics: metrics)
        let response = try await client.send(
            UpstreamRequest(
                url: "\(server.base)/truncate?n=100000&send=1000",
                operation: "get"))
        await #expect(throws: ByteStreamError.truncated(expected: 100_000, received: 1000)) {
            _ = try await response.body.collect(limit: 1 << 20)
        }
        #expect(
            metrics.render().contains(
                "portcullis_upstream_stream_errors_total{backend=\"127.0.0.1:\(server.port)\",op=\"get\",reason=\"truncated\"} 1"
            ))
    }

    @Test func upstreamKilledMidDownloadTruncatesTheStream() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let response = try await client.send(UpstreamRequest(url: "\(server.base)/bytes?n=\(200 << 20)"))
        var received = 0
        await #expect(throws: ByteStreamError.self) {
            while let chunk = try await response.body.next(maxLength: 64 * 1024) {
                received += chunk.count
                if received >= 1 << 20 && server.process.isRunning { server.kill() }
            }
        }
        #expect(received < 200 << 20)
        try await waitUntil { client.activeTransfers == 0 }
    }

    @Test func slowHeadTimesOut() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let start = Date()
        await #expect(throws: UpstreamError.timedOut(.firstByte)) {
            _ = try await client.send(
                UpstreamRequest(
                    url: "\(server.base)/slowhead?s=30",
                    timeouts: .init(firstByte: 0.5), idempotent: false))
        }
        // The server answers after 30 s; the bound is loose because a loaded CI machine delays resumption.
        #expect(Date().timeIntervalSince(start) < 20)
    }

    @Test func stalledBodyTimesOut() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let response = try await client.send(
            UpstreamRequest(
                url: "\(server.base)/stall?send=100&s=30",
                timeouts: .init(idle: 1)))
        let start = Date()
        await #expect(throws: (any Error).self) { _ = try await response.body.collect(limit: 1 << 20) }
        #expect(Date().timeIntervalSince(start) < 20)
    }

    @Test func idempotentRequestsAreRetriedOnRetryableStatuses() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient(configuration: .init(baseBackoff: 0.01))
        let ok = try await client.fetch(UpstreamRequest(url: "\(server.base)/flaky?key=a&fail=2"), maxBytes: 100)
        #expect(ok.status == 200)
        #expect(String(decoding: ok.body, as: UTF8.self) == "ok after 3")
        // Not idempotent: the first 503 is the answer.
        let once = try await client.fetch(
            UpstreamRequest(method: "POST", url: "\(server.base)/flaky?key=b&fail=2"),
            maxBytes: 100)
        #expect(once.status == 503)
        let hits = try await client.fetch(UpstreamRequest(url: "\(server.base)/hits?key=b"), maxBytes: 100)
        #expect(String(decoding: hits.body, as: UTF8.self) == "1")
    }

    @Test func connectionRefusedIsRetriedThenOpensTheCircuitWhichRecovers() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient(
            configuration: .init(
                maxAttempts: 2, baseBackoff: 0.001, breakerThreshold: 4,
                breakerCooldown: 0.5))
        let dead = "http://127.0.0.1:\(closedPort())/x"
        for _ in 0..<2 {
            await #expect(throws: UpstreamError.self) {
                _ = try await client.send(UpstreamRequest(url: dead, backend: "bucket"))
            }
        }
        #expect(!client.isAvailable(backend: "bucket"))
        do {
            _ = try await client.send(UpstreamRequest(url: dead, backend: "bucket"))
            Issue.record("expected the open circuit to fail fast")
        } catch {
            guard case .circuitOpen(let retryAfter) = error else { Issue.record("got \(error)"); return }
            #expect(retryAfter == 1)
        }
        try await waitUntil { client.isAvailable(backend: "bucket") }
        // Half-open: the probe goes to a healthy upstream and closes the circuit.
        let probe = try await client.fetch(
            UpstreamRequest(url: "\(server.base)/bytes?n=10", backend: "bucket"),
            maxBytes: 100)
        #expect(probe.status == 200)
        #expect(client.isAvailable(backend: "bucket"))
    }

    @Test func taskCancellationAbortsAWaitingRequest() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let task = Task {
            try await client.send(UpstreamRequest(url: "\(server.base)/slowhead?s=5"))
        }
        try await waitUntil { client.activeTransfers == 1 }
        task.cancel()
        await #expect(throws: UpstreamError.cancelled) { _ = try await task.value }
        try await waitUntil { client.activeTransfers == 0 }
    }
}
