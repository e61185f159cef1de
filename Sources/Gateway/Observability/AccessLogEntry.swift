public import PortcullisCore

/// The facts of one finished exchange, as written to the access log (docs/operations.md).
///
/// `target` must already be redacted (`AccessLog.redactedTarget`); nothing here may hold a token, an
/// `Authorization` value or a key — the renderer writes every field as given, only escaped: in both formats
/// every string goes through JSON's string escapes (`JSONValue.appendEscaped`, `LogText`), so a value (an
/// object name, a header) cannot break the line or forge another record.
public struct AccessLogEntry: Sendable {
    /// Wall-clock time the request head was complete.
    public var time: Timestamp
    public var requestID: String
    public var remoteAddress: String
    public var method: String
    /// The route template (`/v0/b/{bucket}/o/{object}`), never the raw path.
    public var route: String
    /// The request-target with the query redacted.
    public var target: String
    public var bucket: String?
    public var object: String?
    /// 499 when the client went away before the response was complete.
    public var status: Int
    public var bytesIn: Int64
    public var bytesOut: Int64
    public var durationNanos: UInt64
    public var timeToFirstByteNanos: UInt64?
    public var upstreamNanos: UInt64
    public var principalUID: String?
    /// `allow`, `deny`, `token`, `admin`, or nil.
    public var decision: String?
    public var range: String?
    public var userAgent: String?
    public var traceID: String?

    public init(
        time: Timestamp, requestID: String, remoteAddress: String, method: String, route: String,
        target: String, bucket: String? = nil, object: String? = nil, status: Int, bytesIn: Int64 = 0,
        bytesOut: Int64 = 0, durationNanos: UInt64 = 0, timeToFirstByteNanos: UInt64? = nil,
        upstreamNanos: UInt64 = 0, principalUID: String? = nil, decision: String? = nil,
        range: String? = nil, userAgent: String? = nil, traceID: String? = nil
    ) {
        self.time = time
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.method = method
        self.route = route
        self.target = target
        self.bucket = bucket
        self.object = object
        self.status = status
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.durationNanos = durationNanos
        self.timeToFirstByteNanos = timeToFirstByteNanos
        self.upstreamNanos = upstreamNanos
        self.principalUID = principalUID
        self.decision = decision
        self.range = range
        self.userAgent = userAgent
        self.traceID = traceID
    }

    /// One line (newline included) in the requested format.
    public func rendered(_ format: LogFormat) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(512)
        render(format, into: &out)
        return out
    }

    /// One line (newline included) appended to `out`.
    public func render(_ format: LogFormat, into out: inout [UInt8]) {
        switch format {
        case .json: renderJSON(into: &out)
        case .text: renderText(into: &out)
        }
    }

    /// `{"time":...,"level":"info","msg":"access","request_id":...}`; absent values are `null` so every line has
    /// the same keys.
    func renderJSON(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"time":""#.utf8)
        time.append(fractionDigits: 3, to: &out)
        out.append(contentsOf: #"","level":"info","msg":"access","request_id":"#.utf8)
        JSONValue.encodeString(requestID, into: &out)
        field("remote_addr", remoteAddress, &out)
        field("method", method, &out)
        field("route", route, &out)
        field("path", target, &out)
        field("bucket", bucket, &out)
        field("object", object, &out)
        number("status", Int64(status), &out)
        number("bytes_in", bytesIn, &out)
        number("bytes_out", bytesOut, &out)
        milliseconds("duration_ms", durationNanos, &out)
        milliseconds("ttfb_ms", timeToFirstByteNanos, &out)
        milliseconds("upstream_ms", upstreamNanos, &out)
        field("uid", principalUID, &out)
        field("decision", decision, &out)
        field("range", range, &out)
        field("user_agent", userAgent, &out)
        field("trace_id", traceID, &out)
        out.append(contentsOf: "}\n".utf8)
    }

    /// `TIME STATUS METHOD PATH DURATIONms in=N out=N route=... rid=... remote=... [bucket=...] [object=...]
    /// [ttfb=...ms] [upstream=...ms] [uid=...] [decision=...] [range=...] [trace=...] [ua="..."]`. Every string
    /// is escaped and, as a `key=value` value, quoted when it must be (`LogText`); bytes appended in place, as
    /// for JSON.
    func renderText(into out: inout [UInt8]) {
        time.append(fractionDigits: 3, to: &out)
        out.append(UInt8(ascii: " "))
        DecimalText.append(Int64(status), to: &out)
        out.append(UInt8(ascii: " "))
        LogText.appendEscaped(method, into: &out)
        out.append(UInt8(ascii: " "))
        LogText.appendEscaped(target, into: &out)
        out.append(UInt8(ascii: " "))
        Self.appendMilliseconds(durationNanos, to: &out)
        out.append(contentsOf: "ms in=".utf8)
        DecimalText.append(bytesIn, to: &out)
        out.append(contentsOf: " out=".utf8)
        DecimalText.append(bytesOut, to: &out)
        LogText.appendField("route", route, into: &out)
        LogText.appendField("rid", requestID, into: &out)
        LogText.appendField("remote", remoteAddress, into: &out)
        if let bucket { LogText.appendField("bucket", bucket, into: &out) }
        if let object { LogText.appendField("object", object, into: &out) }
        if let timeToFirstByteNanos {
            out.append(contentsOf: " ttfb=".utf8)
            Self.appendMilliseconds(timeToFirstByteNanos, to: &out)
            out.append(contentsOf: "ms".utf8)
        }
        if upstreamNanos > 0 {
            out.append(contentsOf: " upstream=".utf8)
            Self.appendMilliseconds(upstreamNanos, to: &out)
            out.append(contentsOf: "ms".utf8)
        }
        if let principalUID { LogText.appendField("uid", principalUID, into: &out) }
        if let decision { LogText.appendField("decision", decision, into: &out) }
        if let range { LogText.appendField("range", range, into: &out) }
        if let traceID { LogText.appendField("trace", traceID, into: &out) }
        if let userAgent {
            out.append(contentsOf: " ua=".utf8)
            JSONValue.encodeString(userAgent, into: &out)
        }
        out.append(UInt8(ascii: "\n"))
    }

    private func field(_ key: StaticString, _ value: String?, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(contentsOf: "\":".utf8)
        if let value { JSONValue.encodeString(value, into: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    private func number(_ key: StaticString, _ value: Int64, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(contentsOf: "\":".utf8)
        DecimalText.append(value, to: &out)
    }

    private func milliseconds(_ key: StaticString, _ nanos: UInt64?, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(contentsOf: "\":".utf8)
        guard let nanos else { out.append(contentsOf: "null".utf8); return }
        Self.appendMilliseconds(nanos, to: &out)
    }

    /// Milliseconds with three decimals (microsecond resolution), without Foundation formatting.
    static func appendMilliseconds(_ nanos: UInt64, to out: inout [UInt8]) {
        let micros = nanos / 1000
        DecimalText.append(micros / 1000, to: &out)
        out.append(UInt8(ascii: "."))
        let fraction = micros % 1000
        out.append(UInt8(truncatingIfNeeded: 48 + fraction / 100))
        out.append(UInt8(truncatingIfNeeded: 48 + fraction / 10 % 10))
        out.append(UInt8(truncatingIfNeeded: 48 + fraction % 10))
    }
}
