import Foundation

/// The CLI's exit statuses — 0 success, 1 failure (the server refused, a network or file error), 2 usage
/// error — and the one-line messages that go with them on stderr.
enum CLIExit {
    static func success() -> Never { exit(0) }

    /// A failure of the operation itself: one line, exit 1.
    static func failure(_ message: String) -> Never {
        FileHandle.standardError.write(Data("portcullis-cli: \(message)\n".utf8))
        exit(1)
    }

    /// A command line that cannot be run as given: one line naming where to look, exit 2.
    static func usage(_ message: String, command: CommandSpec? = nil) -> Never {
        let hint = command.map { "portcullis-cli \($0.name) --help" } ?? "portcullis-cli --help"
        FileHandle.standardError.write(Data("portcullis-cli: \(message) (see `\(hint)`)\n".utf8))
        exit(2)
    }
}
