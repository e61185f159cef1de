import Foundation
import PortcullisCore
import Synchronization
import Testing

@testable import Upstream

/// Spans handed to a recorder, for inspection.
final class RecordedSpans: SpanRecorder {
    private let spans = Mutex<[SpanData]>([])
    func record(_ span: SpanData) { spans.withLock { $0.append(span) } }
    var all: [SpanData] { spans.withLock { $0 } }
}

/// `UpstreamRequest.trace`: the `traceparent` each attempt sends and the client span it records.
@Suite struct UpstreamTracingTests {
    static let parent = TraceContext(
        traceIDHigh: 0x4bf9_2f35_77b3_4da6, traceIDLow: 0xa3ce_929d_0e0e_4736, spanID: 0x00f0_67aa_0ba9_02b7,
        sampled: true, traceState: "vendor=x")

    @Test func recordedTraceSendsTheAttemptSpanAsParent() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let spans = RecordedSpans()
        let result = try await client.fetch(
            UpstreamRequest(
                method: "POST", url: "\(server.base)/echo", body: .bytes([1, 2, 3]), operation: "put",
                trace: Trace(context: Self.parent, recorder: spans)), maxBytes: 1024)
        #expect(result.status == 200)
        let echoed = try JSONValue.parse(result.headers.first(ignoringCase: "x-headers") ?? "")
        try await waitUntil { spans.all.count == 1 }
        let span = try #require(spans.all.first)
        #expect(span.kind == .client)
        #expect(span.name == "POST put")
        #expect(span.parentSpanID == Self.parent.spanID)
        #expect(span.context.traceIDLow == Self.parent.traceIDLow)
        #expect(span.context.spanID != Self.parent.spanID)
        #expect(echoed["traceparent"]?.stringValue == span.context.traceparent)
        #expect(echoed["tracestate"]?.stringValue == "vendor=x")
        #expect(span.attributes.contains { $0.0 == "http.response.status_code" && $0.1 == .int(200) })
        #expect(span.endNanos >= span.startNanos)
    }

    @Test func eachRetriedAttemptIsItsOwnSpan() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient(configuration: UpstreamConfiguration(baseBackoff: 0.01))
        let spans = RecordedSpans()
        let key = UUID().uuidString
        let ok = try await client.fetch(
            UpstreamRequest(
                url: "\(server.base)/flaky?key=\(key)&fail=1", trace: Trace(context: Self.parent, recorder: spans)),
            maxBytes: 100)
        #expect(ok.status == 200)
        try await waitUntil { spans.all.count == 2 }
        let attempts = spans.all.sorted { $0.startNanos < $1.startNanos }
        #expect(attempts[0].errorMessage == "HTTP 503")
        #expect(attempts[1].attributes.contains { $0.0 == "http.request.resend_count" && $0.1 == .int(1) })
        #expect(Set(attempts.map(\.context.spanID)).count == 2)
    }

    @Test func unrecordedTraceStillPropagatesTheCallersContext() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        var unsampled = Self.parent
        unsampled.sampled = false
        let result = try await client.fetch(
            UpstreamRequest(url: "\(server.base)/echo", trace: Trace(context: unsampled, recorder: nil)),
            maxBytes: 1024)
        let echoed = try JSONValue.parse(result.headers.first(ignoringCase: "x-headers") ?? "")
        #expect(echoed["traceparent"]?.stringValue == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
    }

    @Test func noTraceSendsNoTraceHeaders() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let result = try await client.fetch(UpstreamRequest(url: "\(server.base)/echo"), maxBytes: 1024)
        let echoed = try JSONValue.parse(result.headers.first(ignoringCase: "x-headers") ?? "")
        #expect(echoed["traceparent"] == nil)
    }
}
