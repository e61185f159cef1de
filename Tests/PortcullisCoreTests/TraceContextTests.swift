import Testing

@testable import PortcullisCore

/// The W3C `traceparent` parser and formatter, and fresh ids.
@Suite struct TraceContextTests {
    static let example = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func parsesAndFormatsTheSpecExample() throws {
        let context = try #require(TraceContext(traceparent: Self.example, tracestate: "congo=t61rcWkgMzE"))
        #expect(context.traceIDHigh == 0x4bf9_2f35_77b3_4da6)
        #expect(context.traceIDLow == 0xa3ce_929d_0e0e_4736)
        #expect(context.spanID == 0x00f0_67aa_0ba9_02b7)
        #expect(context.sampled)
        #expect(context.traceState == "congo=t61rcWkgMzE")
        #expect(context.traceIDHex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.traceparent == Self.example)
        let child = context.child(0x1122_3344_5566_7788)
        #expect(child.traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-1122334455667788-01")
        #expect(child.headers.map(\.0) == ["traceparent", "tracestate"])
        #expect(child.headers[1].1 == "congo=t61rcWkgMzE")
    }

    @Test func unsampledFlagRoundTrips() throws {
        let context = try #require(
            TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"))
        #expect(!context.sampled)
        #expect(context.traceparent.hasSuffix("-00"))
        #expect(context.headers.count == 1)
    }

    @Test(arguments: [
        "", "garbage",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero parent id
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // forbidden version
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",  // version 00 is exactly 55
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  // later version: a '-' must follow
    ])
    func rejectsInvalidHeaders(_ header: String) {
        #expect(TraceContext(traceparent: header) == nil)
    }

    @Test func acceptsLaterVersionsWithMoreFields() throws {
        let context = try #require(
            TraceContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"))
        // We speak version 00: what we send on is the version we know.
        #expect(context.traceparent == Self.example)
    }

    @Test func dropsAMalformedTracestateButKeepsTheParent() throws {
        let long = String(repeating: "a", count: 513)
        #expect(try #require(TraceContext(traceparent: Self.example, tracestate: long)).traceState == nil)
        #expect(try #require(TraceContext(traceparent: Self.example, tracestate: "a=\u{1}")).traceState == nil)
        #expect(TraceContext(traceparent: nil, tracestate: "a=b") == nil)
    }

    @Test func freshIDsAreNonZeroAndDistinct() {
        var seen = Set<UInt64>()
        for _ in 0..<10_000 {
            let id = TraceIDs.next()
            #expect(id != 0)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
        let trace = TraceIDs.newTrace(sampled: true)
        #expect(trace.traceIDHigh | trace.traceIDLow != 0)
        #expect(TraceContext(traceparent: trace.traceparent) == trace)
    }

    @Test func unrecordedTraceBuildsNoSpans() {
        let trace = Trace(context: TraceIDs.newTrace(sampled: true), recorder: nil)
        #expect(!trace.isRecording)
        #expect(trace.startSpan("x") == nil)
        #expect(trace.startRootSpan("x") == nil)
    }
}
