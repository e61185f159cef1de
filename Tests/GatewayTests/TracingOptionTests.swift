import Testing

@testable import Gateway

/// `--otlp-endpoint` / `PORTCULLIS_OTLP_ENDPOINT` and `--trace-sample-ratio` / `PORTCULLIS_TRACE_SAMPLE_RATIO`.
@Suite struct TracingOptionTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        try ConfigurationParser.parse(arguments: arguments, environment: environment)
    }

    @Test func offByDefault() throws {
        let config = try parse([])
        #expect(config.otlpEndpoint == nil)
        #expect(config.traceSampleRatio == nil)
        #expect(ConfigurationOption.all.contains(.otlpEndpoint))
        #expect(ConfigurationOption.all.contains(.traceSampleRatio))
    }

    @Test func flagsAndVariables() throws {
        let flags = try parse(["--otlp-endpoint", "http://collector:4318/", "--trace-sample-ratio", "0.01"])
        #expect(flags.otlpEndpoint == "http://collector:4318")
        #expect(flags.traceSampleRatio == 0.01)
        let env = try parse(
            [], ["PORTCULLIS_OTLP_ENDPOINT": "https://otel.example", "PORTCULLIS_TRACE_SAMPLE_RATIO": "1"])
        #expect(env.otlpEndpoint == "https://otel.example")
        #expect(env.traceSampleRatio == 1)
        #expect(
            try parse(["--trace-sample-ratio", "0"], ["PORTCULLIS_OTLP_ENDPOINT": "http://c:4318"]).traceSampleRatio
                == 0)
    }

    @Test(arguments: [
        ["--otlp-endpoint", "collector:4318"], ["--otlp-endpoint", "http://c:4318?x=1"],
        ["--otlp-endpoint", "http://c", "--trace-sample-ratio", "1.5"],
        ["--otlp-endpoint", "http://c", "--trace-sample-ratio", "-0.1"],
        ["--otlp-endpoint", "http://c", "--trace-sample-ratio", "nan"],
        ["--otlp-endpoint", "http://c", "--trace-sample-ratio", "half"],
        ["--trace-sample-ratio", "0.5"],
    ])
    func badValuesAreOneLineErrors(arguments: [String]) {
        do {
            _ = try parse(arguments)
            Issue.record("accepted \(arguments)")
        } catch {
            #expect(error.description.contains("otlp-endpoint") || error.description.contains("trace-sample-ratio"))
            #expect(!error.description.contains("\n"))
        }
    }
}
