import HTTPServer
import PortcullisCore
import Testing

@testable import Gateway

#if canImport(Glibc)
import Glibc
#endif

/// The pipeline's per-loop observability behind a real server on both event-loop drivers: access-log lines
/// of one loop turn reach the output in one write, and the metrics summed over the loops' cells count every
/// exchange.
@Suite struct ObservabilityPerLoopTests {
    /// Sends `text` on a new connection and reads until the server closes it.
    private func exchange(port: Int, _ text: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        let bytes = Array(text.utf8)
        try #require(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            reply += buffer[..<n]
        }
        return String(decoding: reply, as: UTF8.self)
    }

    @Test(arguments: EventLoopDriver.available)
    func pipelinedExchangesShareOneLogWriteAndEveryLoopIsCounted(driver: EventLoopDriver) async throws {
        let captured = CapturedLines()
        let registry = MetricsRegistry()
        let responder = try GatewayResponder(
            ops: OpsEndpoints(readiness: Readiness(), registry: registry), surfaces: [EchoAPI()],
            authentication: PermissiveAuthentication(), metrics: HTTPMetrics(registry: registry),
            accessLog: AccessLog(format: .json, output: captured.append))
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoop: driver),
            responder: responder, logger: .disabled)
        let port = try server.start()
        defer { server.stop() }

        let get = "GET /v0/b/bkt/o/file HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n"
        // Three requests in one segment: parsed and answered in one loop turn, logged with one write.
        let pipelined = try exchange(port: port, get + "\r\n" + get + "\r\n" + get + "Connection: close\r\n\r\n")
        #expect(pipelined.components(separatedBy: "HTTP/1.1 200").count == 4)
        // Three more on connections of their own, spread over the loops.
        for _ in 0..<3 { _ = try exchange(port: port, get + "Connection: close\r\n\r\n") }

        // The last line may still be waiting for its loop's end of turn: poll.
        for _ in 0..<2000 where captured.joined.filter({ $0 == "\n" }).count < 6 {
            try await Task.sleep(for: .milliseconds(1))
        }
        let writes = captured.all
        #expect(writes.joined().filter { $0 == "\n" }.count == 6)
        #expect(writes.allSatisfy { $0.hasSuffix("}\n") })
        #expect(
            writes.contains { $0.filter { $0 == "\n" }.count == 3 },
            "pipelined lines in one write: \(writes.count) writes")

        let exposition = registry.render()
        #expect(
            exposition.contains(
                #"portcullis_http_requests_total{route="/v0/b/{bucket}/o/{object}",method="GET",status="200"} 6"#))
        #expect(
            exposition.contains(#"portcullis_http_request_duration_seconds_count{route="/v0/b/{bucket}/o/{object}"} 6"#)
        )
        #expect(exposition.contains("portcullis_http_inflight_requests 0\n"))
    }
}

@Suite struct LoopShardMetricsTests {
    /// Cells written by their own threads and the shared value add up; a gauge raised on one loop and
    /// lowered through the shared path nets out.
    @Test func shardedValuesSumOnRead() async {
        let registry = MetricsRegistry()
        let counter = registry.counter("c_total", help: "c").labels([])
        let gauge = registry.gauge("g", help: "g").labels([])
        let histogram = registry.histogram("h_seconds", help: "h", buckets: [0.5, 1]).labels([])
        let loops = min(LoopShard.loopsPerGroup, 2)
        await withTaskGroup(of: Void.self) { group in
            for loop in 0..<loops {
                // One task per shard: each shard's cells have exactly one writer, as on a loop.
                group.addTask {
                    let shard = LoopShard(group: 0, loop: loop)
                    for _ in 0..<10_000 {
                        counter.increment(on: shard)
                        gauge.increment(on: shard)
                        histogram.observe(0.25, on: shard)
                    }
                }
            }
            group.addTask {
                for _ in 0..<10_000 {
                    counter.increment(by: 2)
                    gauge.decrement()
                    histogram.observe(0.75)
                }
            }
        }
        #expect(counter.current == UInt64(loops * 10_000 + 20_000))
        #expect(gauge.current == Int64(loops * 10_000 - 10_000))
        let text = registry.render()
        #expect(text.contains("h_seconds_bucket{le=\"0.5\"} \(loops * 10_000)\n"))
        #expect(text.contains("h_seconds_count \(loops * 10_000 + 10_000)\n"))
        #expect(text.contains("c_total \(loops * 10_000 + 20_000)\n"))
    }
}
