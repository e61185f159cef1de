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

    /// The text format escapes message, keys and values with JSON's escapes and quotes values that need it:
    /// a record is one line for `str.splitlines()`-like splitters, and each value reads back.
    @Test func textLogLinesEscapeAndNeverSplit() throws {
        let breaks = "\u{0B}\u{0C}\u{1C}\u{1D}\u{1E}\u{85}\u{2028}\u{2029}\r\n"
        let record = LogRecord(
            time: Timestamp(millisecondsSinceEpoch: 0), level: .warning, message: "m\u{2028}x",
            fields: [
                ("name", .string("a\(breaks)1970-01-01T00:00:00.000Z error forged")), ("plain", "p/q.txt"),
                ("k\u{85}", "v"), ("n", -3), ("ok", .bool(false)), ("none", .null), ("bidi", "\u{202E}txt.exe"),
                ("quote", "say \"hi\" \\ bye"), ("eq", "a=b"), ("empty", ""),
            ])
        let line = String(decoding: StreamLogSink.render(record, format: .text), as: UTF8.self)
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) }, "\(line)")
        #expect(
            line == #"1970-01-01T00:00:00.000Z warning m\u2028x name="a\u000b\u000c\u001c\u001d\u001e\u0085\u2028"#
                + #"\u2029\r\n1970-01-01T00:00:00.000Z error forged" plain=p/q.txt k\u0085=v n=-3 ok=false none=- "#
                + #"bidi=\u202etxt.exe quote="say \"hi\" \\ bye" eq="a=b" empty="# + "\n")
        let start = try #require(line.firstRange(of: "name=")).upperBound
        let end = try #require(line.firstRange(of: " plain=")).lowerBound
        let value = try JSONValue.parse(String(line[start..<end]))
        #expect(value == .string("a\(breaks)1970-01-01T00:00:00.000Z error forged"))
    }

    @Test func logTextQuotesOnlyWhatWouldSplitAPair() {
        func value(_ s: String) -> String {
            var out = [UInt8]()
            LogText.appendValue(s, into: &out)
            return String(decoding: out, as: UTF8.self)
        }
        #expect(value("a/b.txt") == "a/b.txt")
        #expect(value("a b") == #""a b""#)
        #expect(value("a=b") == #""a=b""#)
        #expect(value(#"a"b"#) == #""a\"b""#)
        #expect(value("a\\b\u{85}") == #"a\\b\u0085"#)
        #expect(value("") == "")
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
