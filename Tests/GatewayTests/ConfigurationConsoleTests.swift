import Testing

@testable import Gateway

/// `--console on|off` / `PORTCULLIS_CONSOLE` (DESIGN §6): on unless turned off; the flag wins over the env.
@Suite struct ConfigurationConsoleTests {
    @Test func onByDefault() throws {
        #expect(try ConfigurationParser.parse(arguments: [], environment: [:]).console)
    }

    @Test(arguments: [
        ("off", false), ("OFF", false), ("false", false), ("0", false), ("no", false),
        ("on", true), ("true", true), ("1", true), ("yes", true),
    ])
    func flagAndEnvironment(_ value: String, _ expected: Bool) throws {
        #expect(try ConfigurationParser.parse(arguments: ["--console", value], environment: [:]).console == expected)
        #expect(try ConfigurationParser.parse(arguments: ["--console=\(value)"], environment: [:]).console == expected)
        #expect(
            try ConfigurationParser.parse(arguments: [], environment: ["PORTCULLIS_CONSOLE": value]).console == expected
        )
    }

    @Test func theFlagWins() throws {
        let config = try ConfigurationParser.parse(
            arguments: ["--console", "on"], environment: ["PORTCULLIS_CONSOLE": "off"])
        #expect(config.console)
    }

    @Test func anythingElseIsRefusedWithTheOptionNamed() {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationParser.parse(arguments: ["--console", "maybe"], environment: [:])
        }
        do {
            _ = try ConfigurationParser.parse(arguments: [], environment: ["PORTCULLIS_CONSOLE": "sometimes"])
            Issue.record("accepted PORTCULLIS_CONSOLE=sometimes")
        } catch {
            #expect("\(error)".contains("PORTCULLIS_CONSOLE"))
            #expect("\(error)".contains("on or off"))
        }
    }
}
