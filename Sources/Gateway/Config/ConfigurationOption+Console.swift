/// `--console on|off` and `--console-listen HOST:PORT`: the web console at `/console` and its own listener
/// (docs/configuration.md). Kept in their own file so the option lists that other features extend stay small to merge.
extension ConfigurationOption {
    public static let console = ConfigurationOption(
        flag: "console", valueName: "on|off", environment: "PORTCULLIS_CONSOLE", defaultText: "on",
        summary:
            "The web console at `/console` (browse, upload, inspect, rules playground), served by this binary; `off` removes the route."
    )
    public static let consoleListen = ConfigurationOption(
        flag: "console-listen", valueName: "HOST:PORT", environment: "PORTCULLIS_CONSOLE_LISTEN", defaultText: nil,
        summary:
            "Serve the console only on this second address, its own origin (recommended in production): `--listen` then answers `/console` with 404, and the console calls the API at `--public-url`, else at the host it was loaded from on `--listen`'s port."
    )
}

extension ConfigurationParser {
    /// `on`/`off` (and whatever else `parseSwitch` takes), refused in the option's own words.
    static func parseOnOff(_ text: String) -> Result<Bool, ReasonText> {
        parseSwitch(text).mapError { _ in "expected on or off" }
    }
}
