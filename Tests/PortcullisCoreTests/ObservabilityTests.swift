import Testing

@testable import PortcullisCore

@Suite struct ObservabilityTests {
    @Test func rendersPrometheusText() {
        let registry = MetricsRegistry()
        let requests = registry.counter("t_requests_total", help: "Requests.", labels: ["route", "status"])
        requests.labels("/a", "200").increment()
        requests.labels("/a", "200").increment(by: 2)
        requests.labels("/b\"", "404").increment()
        let latency = registry.histogram("t_seconds", help: "Latency.", labels: ["route"], buckets: [0.1, 1])
        latency.labels("/a").observe(0.05)
        latency.labels("/a").observe(0.5)
        latency.labels("/a").observe(5)
        registry.gauge("t_up", help: "Up.") { 1 }
        let text = registry.render()
        #expect(text.contains("# TYPE t_requests_total counter\n"))
        #expect(text.contains("t_requests_total{route=\"/a\",status=\"200\"} 3\n"))
        #expect(text.contains("t_requests_total{route=\"/b\\\"\",status=\"404\"} 1\n"))
        #expect(text.contains("t_seconds_bucket{route=\"/a\",le=\"0.1\"} 1\n"))
        #expect(text.contains("t_seconds_bucket{route=\"/a\",le=\"1\"} 2\n"))
        #expect(text.contains("t_seconds_bucket{route=\"/a\",le=\"+Inf\"} 3\n"))
        #expect(text.contains("t_seconds_count{route=\"/a\"} 3\n"))
        #expect(text.contains("t_up 1\n"))
        #expect(registry.counter("t_requests_total", help: "again", labels: ["route", "status"]) === requests)
    }

    @Test func jsonLogLinesEscapeAndNeverSplit() {
        let record = LogRecord(
            time: Timestamp(millisecondsSinceEpoch: 0), level: .info, message: "a\nb",
            fields: [("path", "x\"y"), ("n", 3), ("ok", .bool(true))])
        let line = String(decoding: StreamLogSink.render(record, format: .json), as: UTF8.self)
        #expect(
            line == #"{"time":"1970-01-01T00:00:00.000Z","level":"info","msg":"a\nb","path":"x\"y","n":3,"ok":true}"#
                + "\n")
        let text = String(decoding: StreamLogSink.render(record, format: .text), as: UTF8.self)
        #expect(text.hasPrefix("1970-01-01T00:00:00.000Z info a"))
    }

    @Test func streamsCollectWithinLimits() async throws {
        let stream = BufferByteStream(Array(repeating: 7, count: 100_000))
        #expect(try await stream.collect(limit: 100_000).count == 100_000)
        await #expect(throws: ByteStreamError.limitExceeded(limit: 10)) {
            try await BufferByteStream("0123456789ab").collect(limit: 10)
        }
        let limited = LimitedByteStream(BufferByteStream(Array(repeating: 1, count: 50)), limit: 20)
        await #expect(throws: ByteStreamError.limitExceeded(limit: 20)) {
            while try await limited.next(maxLength: 8) != nil {}
        }
    }
}
