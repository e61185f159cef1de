import HTTPServer
import PortcullisCore
import Synchronization
import Testing
import Upstream

@testable import Gateway

/// Spans handed to a recorder, for inspection.
final class CapturedSpans: SpanRecorder {
    private let spans = Mutex<[SpanData]>([])
    func record(_ span: SpanData) { spans.withLock { $0.append(span) } }
    var all: [SpanData] { spans.withLock { $0 } }
}

/// The OTLP encoder, the sampler, the tracer's request decisions, the exporter's bound, and the pipeline's
/// spans and trace ids.
@Suite struct TracingTests {
    static let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    // MARK: OTLP protobuf

    @Test func varintsAreLittleEndianGroupsOfSeven() {
        var writer = ProtobufWriter()
        writer.varint(150)
        writer.varint(0)
        writer.varint(UInt64.max)
        #expect(writer.bytes == [0x96, 0x01, 0x00] + Array(repeating: 0xFF, count: 9) + [0x01])
    }

    /// The expected bytes are what opentelemetry-proto's Python classes (protobuf) serialize for the same
    /// request: `ExportTraceServiceRequest.SerializeToString()` of one resource, one scope and one span.
    @Test func exportRequestMatchesTheReferenceEncoding() {
        let span = SpanData(
            name: "GET /r", kind: .server,
            context: TraceContext(
                traceIDHigh: 0x4bf9_2f35_77b3_4da6, traceIDLow: 0xa3ce_929d_0e0e_4736, spanID: 0x00f0_67aa_0ba9_02b7,
                sampled: true, traceState: "k=v"),
            parentSpanID: 0x0102_0304_0506_0708, startNanos: 1_700_000_000_000_000_000,
            endNanos: 1_700_000_000_500_000_000,
            attributes: [("s", .string("x")), ("i", .int(-2)), ("b", .bool(true)), ("d", .double(1.5))],
            errorMessage: "boom")
        let encoding = OTLPEncoding(serviceName: "portcullis", serviceVersion: "1.0", instanceID: "i1")
        let expected =
            "0af6010a550a1c0a0c736572766963652e6e616d65120c0a0a706f727463756c6c69730a180a0f736572766963652e7665"
            + "7273696f6e12050a03312e300a1b0a13736572766963652e696e7374616e63652e696412040a026931129c010a110a0a70"
            + "6f727463756c6c69731203312e301286010a104bf92f3577b34da6a3ce929d0e0e4736120800f067aa0ba902b71a036b3d"
            + "76220801020304050607082a06474554202f7230023900002a36fe9c9717410065f753fe9c97174a080a01731203"
            + "0a01784a100a0169120b18feffffffffffffffff014a070a0162120210014a0e0a0164120921000000000000f83f7a0812"
            + "04626f6f6d1802"
        #expect(hex(encoding.exportRequest([span])) == expected)
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    // MARK: sampling

    @Test func ratioSamplerCutsOnTheTraceIDsLowBits() {
        #expect(!TraceSampler(ratio: 0).samples(traceIDLow: 0))
        #expect(TraceSampler(ratio: 1).samples(traceIDLow: .max))
        let half = TraceSampler(ratio: 0.5)
        #expect(half.samples(traceIDLow: 1 << 63 - 1))
        #expect(!half.samples(traceIDLow: 1 << 63))
        #expect(TraceSampler(ratio: 7).ratio == 1)
        #expect(TraceSampler(ratio: -1).ratio == 0)
        var sampled = 0
        for _ in 0..<20_000 where TraceSampler(ratio: 0.01).samples(traceIDLow: TraceIDs.next()) { sampled += 1 }
        #expect((50...400).contains(sampled))
    }

    @Test func samplerIsParentBased() throws {
        let sampler = TraceSampler(ratio: 0)
        let sampledParent = try #require(TraceContext(traceparent: Self.incoming))
        let unsampledParent = try #require(
            TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"))
        let fresh = TraceIDs.newTrace(sampled: false)
        #expect(sampler.decide(incoming: sampledParent, new: fresh))
        #expect(!TraceSampler(ratio: 1).decide(incoming: unsampledParent, new: fresh))
        #expect(!sampler.decide(incoming: nil, new: fresh))
        #expect(TraceSampler(ratio: 1).decide(incoming: nil, new: fresh))
    }

    // MARK: the tracer's request decisions

    @Test func offKeepsTheCallersContextAndStartsUnsampledTraces() {
        let (joined, parent) = Tracer.off.beginRequest(traceparent: Self.incoming, tracestate: "a=b")
        #expect(!joined.isRecording)
        #expect(joined.context.traceparent == Self.incoming)
        #expect(joined.context.traceState == "a=b")
        #expect(parent == 0x00f0_67aa_0ba9_02b7)
        let (started, none) = Tracer.off.beginRequest(traceparent: nil, tracestate: "a=b")
        #expect(!started.isRecording && !started.context.sampled && none == 0)
        #expect(started.context.traceState == nil)
    }

    @Test func onRecordsSampledRequestsUnderTheCallersSpan() {
        let tracer = Tracer(sampler: TraceSampler(ratio: 0), recorder: CapturedSpans())
        let (joined, parent) = tracer.beginRequest(traceparent: Self.incoming, tracestate: nil)
        #expect(joined.isRecording)
        #expect(joined.context.traceIDHex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(joined.context.spanID != parent && parent == 0x00f0_67aa_0ba9_02b7)
        let (unsampled, _) = tracer.beginRequest(
            traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", tracestate: nil)
        #expect(!unsampled.isRecording)
        #expect(!tracer.beginRequest(traceparent: nil, tracestate: nil).trace.isRecording)
        #expect(!tracer.newTrace().isRecording)
        let always = Tracer(sampler: TraceSampler(ratio: 1), recorder: CapturedSpans())
        #expect(always.beginRequest(traceparent: nil, tracestate: nil).trace.context.sampled)
        #expect(always.newTrace().isRecording)
    }

    // MARK: the pipeline

    private func responder(_ tracer: Tracer, _ lines: CapturedLines) throws -> GatewayResponder {
        let registry = MetricsRegistry()
        return try GatewayResponder(
            ops: OpsEndpoints(readiness: Readiness(probeInterval: .zero) { true }, registry: registry),
            surfaces: [EchoAPI()],
            authentication: PermissiveAuthentication(), metrics: HTTPMetrics(registry: registry),
            accessLog: AccessLog(format: .json, output: lines.append), tracer: tracer)
    }

    private func send(_ responder: GatewayResponder, headers: HTTPHeaders) async {
        let response = await responder.respond(
            to: HTTPRequest(method: .get, target: "/v0/b/bkt/o/file", headers: headers))
        response.onComplete?(
            ExchangeSummary(
                status: response.status, bytesIn: 0, bytesOut: 5, completed: true, durationNanos: 2_000_000,
                timeToFirstByteNanos: nil))
    }

    @Test func sampledRequestRecordsItsServerSpanAndAuthentication() async throws {
        let spans = CapturedSpans()
        let lines = CapturedLines()
        let gateway = try responder(Tracer(sampler: TraceSampler(ratio: 1), recorder: spans), lines)
        await send(gateway, headers: ["traceparent": Self.incoming, "Authorization": "Bearer secret"])
        let request = try #require(spans.all.first { $0.kind == .server })
        #expect(request.name == "GET /v0/b/{bucket}/o/{object}")
        #expect(request.parentSpanID == 0x00f0_67aa_0ba9_02b7)
        #expect(request.context.traceIDHex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(request.endNanos - request.startNanos == 2_000_000)
        #expect(request.attributes.contains { $0.0 == "http.response.status_code" && $0.1 == .int(200) })
        let auth = try #require(spans.all.first { $0.name == "authenticate" })
        #expect(auth.parentSpanID == request.context.spanID)
        #expect(auth.context.traceIDHex == request.context.traceIDHex)
        #expect(auth.attributes.contains { $0.0 == "portcullis.auth.result" && $0.1 == .string("authenticated") })
        #expect(lines.joined.contains(#""trace_id":"4bf92f3577b34da6a3ce929d0e0e4736""#))
    }

    @Test func samplingZeroRecordsNothingButLogsATraceID() async throws {
        let spans = CapturedSpans()
        let lines = CapturedLines()
        let gateway = try responder(Tracer(sampler: TraceSampler(ratio: 0), recorder: spans), lines)
        for _ in 0..<20 { await send(gateway, headers: [:]) }
        #expect(spans.all.isEmpty)
        #expect(lines.all.count == 20)
        var ids = Set<String>()
        for line in lines.all {
            let json = try JSONValue.parse(line)
            let id = try #require(json["trace_id"]?.stringValue)
            #expect(id.utf8.count == 32)
            ids.insert(id)
        }
        #expect(ids.count == 20)
    }

    @Test func offLogsTheCallersTraceID() async throws {
        let lines = CapturedLines()
        await send(try responder(.off, lines), headers: ["traceparent": Self.incoming])
        #expect(lines.joined.contains(#""trace_id":"4bf92f3577b34da6a3ce929d0e0e4736""#))
    }

    // MARK: the exporter's bound

    @Test func fullQueueDropsAndCounts() {
        let registry = MetricsRegistry()
        let exporter = SpanExporter(
            settings: SpanExporter.Settings(endpoint: "http://127.0.0.1:9/", capacity: 3, maxBatch: 10),
            encoding: OTLPEncoding(serviceName: "t", serviceVersion: "0", instanceID: "i"),
            client: UpstreamClient(), metrics: registry)
        #expect(exporter.settings.tracesURL == "http://127.0.0.1:9/v1/traces")
        let trace = Trace(context: TraceIDs.newTrace(sampled: true), recorder: exporter)
        for _ in 0..<5 { trace.startRootSpan("x")?.end() }
        #expect(exporter.queuedCount == 3)
        #expect(registry.render().contains(#"portcullis_trace_spans_dropped_total{reason="queue_full"} 2"#))
    }
}
