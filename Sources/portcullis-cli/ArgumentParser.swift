import PortcullisCore

/// A command's arguments, checked against its `CommandSpec`.
struct ParsedArguments {
    /// Option values by long name; a switch has one empty value per occurrence.
    private(set) var values: [String: [String]] = [:]
    private(set) var operands: [String] = []

    func has(_ name: String) -> Bool { values[name] != nil }
    /// The last value given for an option.
    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }

    fileprivate mutating func add(_ name: String, _ value: String) { values[name, default: []].append(value) }
    fileprivate mutating func addOperand(_ operand: String) { operands.append(operand) }
}

enum ArgumentParser {
    /// Parses `--flag VALUE`, `--flag=VALUE`, switches and operands in any order (`--` ends the options, so an
    /// operand may start with `-`). `--help`/`-h` prints the command's usage and exits 0; an unknown option, a
    /// missing value or a value given to a switch is a usage error (exit 2).
    static func parse(_ arguments: [String], for spec: CommandSpec) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard !optionsEnded, argument.hasPrefix("-"), argument != "-" else {
                parsed.addOperand(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (name, inline) = split(argument)
            if CommandSpec.help.names.contains(name) {
                print(spec.usage, terminator: "")
                CLIExit.success()
            }
            guard let option = spec.options.first(where: { $0.names.contains(name) }) else {
                CLIExit.usage("\(spec.name): unknown option \(name)", command: spec)
            }
            if option.valueName == nil {
                if inline != nil { CLIExit.usage("\(spec.name): \(option.name) takes no value", command: spec) }
                parsed.add(option.name, "")
            } else if let inline {
                parsed.add(option.name, inline)
            } else {
                guard index < arguments.count else {
                    CLIExit.usage("\(spec.name): \(option.name) needs a value", command: spec)
                }
                parsed.add(option.name, arguments[index])
                index += 1
            }
        }
        return parsed
    }

    /// `--flag=value` → (`--flag`, `value`); anything else → (argument, nil).
    static func split(_ argument: String) -> (String, String?) {
        guard argument.bytesHasPrefix("--"), let (flag, value) = argument.bytesCut(at: UInt8(ascii: "=")) else {
            return (argument, nil)
        }
        return (flag, value)
    }
}
