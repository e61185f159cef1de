import PortcullisCore

/// The options of a one-shot subcommand (`token`, `service-account`): `--name value` or `--name=value` from a
/// known set, each at most once, boolean `--flag`s, and positional arguments. Misuse ends the process with a
/// message naming the subcommand, as every subcommand's errors do.
struct SubcommandOptions {
    private(set) var positional: [String] = []
    private(set) var flags: Set<String> = []
    private var values: [String: String] = [:]

    /// Parses `arguments`; `allowsPositional: false` makes any positional argument an error.
    init(
        _ arguments: [String], command: String, valued: Set<String>, flags knownFlags: Set<String> = [],
        allowsPositional: Bool = true
    ) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                guard allowsPositional else { Terminal.fail("\(command): unexpected argument \"\(argument)\"") }
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            if knownFlags.contains(name) {
                flags.insert(name)
                continue
            }
            let value: String
            if let (flag, given) = name.bytesCut(at: UInt8(ascii: "=")) {
                value = given
                name = flag
            } else {
                guard index < arguments.count else { Terminal.fail("\(command): --\(name) needs a value") }
                value = arguments[index]
                index += 1
            }
            guard valued.contains(name) else {
                Terminal.fail("\(command): unknown option --\(name) (see `portcullis \(command) --help`)")
            }
            guard values[name] == nil else { Terminal.fail("\(command): --\(name) given more than once") }
            values[name] = value
        }
    }

    subscript(name: String) -> String? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// `--claims JSON`: a JSON object of token claims, empty when absent.
    func claims(command: String) -> [String: JSONValue] {
        guard let text = values["claims"] else { return [:] }
        guard let parsed = try? JSONValue.parse(text), let object = parsed.objectValue else {
            Terminal.fail("\(command): --claims must be a JSON object")
        }
        return object
    }
}
