import Gateway
import HTTPServer
import PortcullisCore
import Testing

/// `--event-loop` / `PORTCULLIS_EVENT_LOOP`: the HTTP server's driver, and the build-info metric naming it.
@Suite struct EventLoopOptionTests {
    static func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        try ConfigurationParser.parse(arguments: arguments, environment: environment)
    }

    @Test func defaultIsThePlatformDefault() throws {
        let config = try Self.parse([])
        #expect(config.eventLoop == EventLoopDriver.platformDefault)
        #if os(Linux)
        #expect(config.eventLoop == .epoll)
        #endif
    }

    @Test(arguments: EventLoopDriver.available)
    func flagAndEnvironmentSelectTheDriver(driver: EventLoopDriver) throws {
        #expect(try Self.parse(["--event-loop", driver.rawValue]).eventLoop == driver)
        #expect(try Self.parse(["--event-loop=\(driver.rawValue.uppercased())"]).eventLoop == driver)
        #expect(try Self.parse([], ["PORTCULLIS_EVENT_LOOP": driver.rawValue]).eventLoop == driver)
        let other = EventLoopDriver.allCases.first { $0 != driver }!.rawValue
        #expect(
            try Self.parse(["--event-loop", driver.rawValue], ["PORTCULLIS_EVENT_LOOP": other]).eventLoop == driver,
            "the flag wins")
    }

    @Test func unknownOrUnavailableDriversAreRejectedWithOneLine() {
        var bad = ["kqueue", "io_uring", ""]
        bad += EventLoopDriver.allCases.filter { !$0.isAvailable }.map(\.rawValue)
        for value in bad {
            do {
                let config = try Self.parse(["--event-loop=\(value)"])
                Issue.record("accepted \(value): \(config.eventLoop)")
            } catch {
                #expect(!error.description.contains("\n"))
                #expect(error.description.contains("event-loop") || error.description.contains("--event-loop"))
            }
        }
        do {
            _ = try Self.parse([], ["PORTCULLIS_EVENT_LOOP": "select"])
            Issue.record("accepted select")
        } catch {
            #expect(error.description.hasPrefix("invalid PORTCULLIS_EVENT_LOOP value \"select\""))
        }
    }

    @Test func buildInfoCarriesVersionAndDriver() {
        let registry = MetricsRegistry()
        ProcessMetrics.registerBuildInfo(in: registry, version: "1.2.3", eventLoop: "dispatch")
        #expect(registry.render().contains("portcullis_build_info{version=\"1.2.3\",event_loop=\"dispatch\"} 1"))
    }
}
