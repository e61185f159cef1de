/// `--otlp-endpoint URL` and `--trace-sample-ratio R`: span export over OTLP/HTTP and its sampling (docs/configuration.md,
/// docs/configuration.md "Tracing"). Kept in their own file so the shared option lists stay small to merge.
extension ConfigurationOption {
    public static let otlpEndpoint = ConfigurationOption(
        flag: "otlp-endpoint", valueName: "URL", environment: "PORTCULLIS_OTLP_ENDPOINT", defaultText: nil,
        summary:
            "OpenTelemetry collector base URL (`http(s)://host:port`): spans are sent as OTLP/HTTP protobuf to `URL/v1/traces`, batched off the request path. None: no spans are built; `traceparent` is still honoured and propagated."
    )
    public static let traceSampleRatio = ConfigurationOption(
        flag: "trace-sample-ratio", valueName: "R", environment: "PORTCULLIS_TRACE_SAMPLE_RATIO", defaultText: "1",
        summary:
            "Share (0–1) of traces started here that are recorded; a request carrying `traceparent` follows its sampled flag (parent-based). Needs `--otlp-endpoint`."
    )
}

extension ConfigurationParser {
    /// A ratio in 0...1 (`0.01`, `1`).
    static func parseRatio(_ text: String) -> Result<Double, ReasonText> {
        guard let value = Double(text), value.isFinite, (0...1).contains(value) else {
            return .failure("expected a number from 0 to 1")
        }
        return .success(value)
    }

    /// An OTLP endpoint: an http(s) base URL without query or fragment (trailing `/` dropped).
    static func parseOTLPEndpoint(_ text: String) -> Result<String, ReasonText> { parsePublicURL(text) }
}
