public import PortcullisCore

/// Encodes spans as an OTLP `ExportTraceServiceRequest` (opentelemetry-proto,
/// `opentelemetry/proto/collector/trace/v1/trace_service.proto` and `trace/v1/trace.proto`): the body of
/// `POST {endpoint}/v1/traces` with `Content-Type: application/x-protobuf`.
///
/// One `ResourceSpans` (the process: `service.name`, `service.version`, `service.instance.id`), one
/// `ScopeSpans` (scope `portcullis`), then the spans. Field numbers, as the .proto files give them:
/// - ExportTraceServiceRequest: resource_spans 1
/// - ResourceSpans: resource 1, scope_spans 2; Resource: attributes 1
/// - ScopeSpans: scope 1, spans 2; InstrumentationScope: name 1, version 2
/// - Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6, start_time_unix_nano 7
///   (fixed64), end_time_unix_nano 8 (fixed64), attributes 9, status 15, flags 16 (fixed32)
/// - Status: message 2, code 3 (ERROR = 2); KeyValue: key 1, value 2
/// - AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4 (fixed64 bits)
public struct OTLPEncoding: Sendable {
    /// The resource attributes, encoded once.
    private let resource: [UInt8]
    private let scopeVersion: String

    public init(serviceName: String, serviceVersion: String, instanceID: String) {
        var writer = ProtobufWriter()
        Self.attribute(&writer, field: 1, "service.name", .string(serviceName))
        Self.attribute(&writer, field: 1, "service.version", .string(serviceVersion))
        Self.attribute(&writer, field: 1, "service.instance.id", .string(instanceID))
        resource = writer.bytes
        scopeVersion = serviceVersion
    }

    /// The request body for `spans`.
    public func exportRequest(_ spans: [SpanData]) -> [UInt8] {
        var writer = ProtobufWriter()
        writer.messageField(1) { resourceSpans in
            resourceSpans.bytesField(1, resource)
            resourceSpans.messageField(2) { scopeSpans in
                scopeSpans.messageField(1) { scope in
                    scope.stringField(1, "portcullis")
                    scope.stringField(2, scopeVersion)
                }
                for span in spans { scopeSpans.messageField(2) { Self.span(&$0, span) } }
            }
        }
        return writer.bytes
    }

    static func span(_ w: inout ProtobufWriter, _ span: SpanData) {
        w.idField(1, span.context.traceIDHigh, span.context.traceIDLow)
        w.idField(2, span.context.spanID)
        if let state = span.context.traceState { w.stringField(3, state) }
        if span.parentSpanID != 0 { w.idField(4, span.parentSpanID) }
        w.stringField(5, span.name)
        w.varintField(6, UInt64(span.kind.rawValue))
        w.fixed64Field(7, UInt64(bitPattern: span.startNanos))
        w.fixed64Field(8, UInt64(bitPattern: span.endNanos))
        for (key, value) in span.attributes { attribute(&w, field: 9, key, value) }
        if let message = span.errorMessage {
            w.messageField(15) { status in
                if !message.isEmpty { status.stringField(2, message) }
                status.varintField(3, 2)
            }
        }
    }

    static func attribute(_ w: inout ProtobufWriter, field: Int, _ key: String, _ value: SpanAttributeValue) {
        w.messageField(field) { keyValue in
            keyValue.stringField(1, key)
            keyValue.messageField(2) { any in
                switch value {
                case .string(let s): any.stringField(1, s)
                case .bool(let b): any.varintField(2, b ? 1 : 0)
                case .int(let i): any.varintField(3, UInt64(bitPattern: i))
                case .double(let d): any.fixed64Field(4, d.bitPattern)
                }
            }
        }
    }
}
