/// Why the command line or environment could not become a `GatewayConfiguration`. `description` is the one-line
/// message the executable prints before exiting with status 2.
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `value` is what was given; `source` says whether it came from the flag or the env var.
    case invalidValue(option: ConfigurationOption, value: String, reason: String, source: Source = .flag)
    case missingValue(flag: String)
    case unknownFlag(String)
    case unexpectedArgument(String)
    case conflict(String)
    /// A file named by an option could not be used (raised by the executable when it reads it).
    case unreadableFile(option: ConfigurationOption, path: String, reason: String)

    public enum Source: Sendable, Equatable {
        case flag, environment
    }

    public var description: String {
        switch self {
        case .invalidValue(let option, let value, let reason, let source):
            let origin = source == .flag ? "--\(option.flag)" : option.environment
            return "invalid \(origin) value \"\(Self.printable(value))\": \(reason)"
        case .missingValue(let flag): return "\(flag) needs a value"
        case .unknownFlag(let flag): return "unknown option \(Self.printable(flag)) (see `portcullis serve --help`)"
        case .unexpectedArgument(let argument): return "unexpected argument \"\(Self.printable(argument))\""
        case .conflict(let message): return message
        case .unreadableFile(let option, let path, let reason):
            return "--\(option.flag) \(Self.printable(path)): \(reason)"
        }
    }

    /// Keeps the message on one line and short, whatever the user typed.
    private static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(200) {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "?" } else { out.unicodeScalars.append(scalar) }
        }
        return text.unicodeScalars.count > 200 ? out + "..." : out
    }
}
