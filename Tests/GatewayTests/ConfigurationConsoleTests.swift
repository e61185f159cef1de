import Testing

@testable import Gateway

/// `--console on|off` / `PORTCULLIS_CONSOLE` (docs/configuration.md): on unless turned off; the flag wins over the env.
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

/// `--console-listen HOST:PORT` / `PORTCULLIS_CONSOLE_LISTEN`: the console's own listener (absent by default).
@Suite struct ConfigurationConsoleListenTests {
    @Test func absentByDefaultAndParsedFromFlagOrEnvironment() throws {
        #expect(try ConfigurationParser.parse(arguments: [], environment: [:]).consoleListen == nil)
        let flag = try ConfigurationParser.parse(arguments: ["--console-listen", "127.0.0.1:9001"], environment: [:])
        #expect(flag.consoleListen == ListenAddress(host: "127.0.0.1", port: 9001))
        let env = try ConfigurationParser.parse(
            arguments: [], environment: ["PORTCULLIS_CONSOLE_LISTEN": "[::1]:9002"])
        #expect(env.consoleListen == ListenAddress(host: "::1", port: 9002))
    }

    @Test(arguments: [
        (["--console-listen", "127.0.0.1:9001", "--console", "off"], "--console off"),
        (["--listen", "127.0.0.1:9001", "--console-listen", "0.0.0.0:9001"], "another port"),
        (["--console-listen", "nonsense"], "--console-listen"),
    ])
    func conflictsAndBadValuesAreRefused(_ arguments: [String], _ message: String) {
        do {
            _ = try ConfigurationParser.parse(arguments: arguments, environment: [:])
            Issue.record("accepted \(arguments)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }
}
