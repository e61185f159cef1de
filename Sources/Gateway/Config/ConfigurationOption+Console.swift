/// `--console on|off`: the web console at `/console` (DESIGN §6). Kept in its own file so the option lists
/// that other features extend stay small to merge.
extension ConfigurationOption {
    public static let console = ConfigurationOption(
        flag: "console", valueName: "on|off", environment: "PORTCULLIS_CONSOLE", defaultText: "on",
        summary: "The web console at `/console` (browse, upload, inspect, rules playground), served by this binary; `off` removes the route.")
}

extension ConfigurationParser {
    /// `on`/`off` (also `true`/`false`, `yes`/`no`, `1`/`0`), case-insensitive.
    static func parseSwitch(_ text: String) -> Result<Bool, ReasonText> {
        switch text.lowercased() {
        case "on", "true", "yes", "1": .success(true)
        case "off", "false", "no", "0": .success(false)
        default: .failure("expected on or off")
        }
    }
}
