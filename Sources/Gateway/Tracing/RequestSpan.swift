import HTTPServer
import PortcullisCore

/// The server span of one recorded request: started when the pipeline takes the request, ended with its
/// access-log line (after the last byte, or when the client went away). Named `METHOD route-template`, with
/// OpenTelemetry's HTTP server attributes; the raw target is never recorded (object names, `token=`).
struct RequestSpan: Sendable {
    private let span: Span

    /// Nil when the trace is not recorded: then nothing is built.
    init?(_ trace: Trace, remoteParent: UInt64, startedAt: Timestamp) {
        guard let recorder = trace.recorder else { return nil }
        var span = Span(
            name: "request", kind: .server, context: trace.context, parentSpanID: remoteParent, recorder: recorder)
        span.setStart(startedAt.nanosecondsSinceEpoch)
        self.span = span
    }

    func end(method: String, route: String, status: Int, summary: ExchangeSummary, record: AccessRecord) {
        var span = self.span
        span.rename("\(method) \(route)")
        span.setAttribute("http.request.method", method)
        span.setAttribute("http.route", route)
        span.setAttribute("http.response.status_code", status)
        span.setAttribute("http.request.body.size", .int(Int64(summary.bytesIn)))
        span.setAttribute("http.response.body.size", .int(Int64(summary.bytesOut)))
        span.setAttribute("portcullis.request_id", record.requestID)
        if let decision = record.decision { span.setAttribute("portcullis.decision", decision.rawValue) }
        if status >= 500 { span.setError("HTTP \(status)") }
        span.end(atNanos: span.data.startNanos &+ Int64(clamping: summary.durationNanos))
    }
}
