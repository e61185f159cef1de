/// `--console on|off`: the web console at `/console` (DESIGN §6). Kept in its own file so the option lists
/// that other features extend stay small to merge.
extension ConfigurationOption {
    public static let console = ConfigurationOption(
        flag: "console", valueName: "on|off", environment: "PORTCULLIS_CONSOLE", defaultText: "on",
        summary:
            "The web console at `/console` (browse, upload, inspect, rules playground), served by this binary; `off` removes the route."
    )
}

extension ConfigurationParser {
    /// `on`/`off` (and whatever else `parseSwitch` takes), refused in the option's own words.
    static func parseOnOff(_ text: String) -> Result<Bool, ReasonText> {
        parseSwitch(text).mapError { _ in "expected on or off" }
    }
}
