import Testing

@testable import Gateway

/// `--upstream-timeout` / `PORTCULLIS_UPSTREAM_TIMEOUT`: the overall deadline of one upstream call.
@Suite struct UpstreamTimeoutOptionTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        try ConfigurationParser.parse(arguments: arguments, environment: environment)
    }

    @Test func defaultsToThirtySeconds() throws {
        #expect(try parse([]).upstreamTimeout == .seconds(30))
        #expect(ConfigurationOption.all.contains(.upstreamTimeout))
    }

    @Test func flagAndEnvironmentTakeADuration() throws {
        #expect(try parse(["--upstream-timeout", "2.5s"]).upstreamTimeout == .milliseconds(2500))
        #expect(try parse(["--upstream-timeout=750ms"]).upstreamTimeout == .milliseconds(750))
        #expect(try parse([], ["PORTCULLIS_UPSTREAM_TIMEOUT": "1m"]).upstreamTimeout == .seconds(60))
        // A flag wins over its variable.
        #expect(
            try parse(["--upstream-timeout", "5"], ["PORTCULLIS_UPSTREAM_TIMEOUT": "1m"]).upstreamTimeout == .seconds(5)
        )
    }

    @Test(arguments: ["0", "0s", "-1", "soon", "2d", ""])
    func badValuesAreOneLineErrors(value: String) {
        do {
            let config = try parse(["--upstream-timeout", value])
            Issue.record("accepted \(value.debugDescription): \(config.upstreamTimeout)")
        } catch {
            #expect(error.description.contains("upstream-timeout"))
            #expect(!error.description.contains("\n"))
        }
    }
}
