import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis` — the one place that reads flags, env vars and files (docs/architecture.md). Each subcommand lives in its
/// own file; this type only dispatches. Exit codes: 0 success, 1 a failed check/test, 2 a usage or configuration
/// error (one line on stderr).
@main
struct PortcullisMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let command = arguments.first else {
            Terminal.printError(HelpText.usage)
            exit(2)
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "serve":
            await ServeCommand.run(rest)
        case "rules":
            RulesCommand.run(rest)
        case "token":
            TokenCommand.run(rest)
        case "events":
            EventsCommand.run(rest)
        case "service-account":
            ServiceAccountCommand.run(rest)
        case "--help", "-h":
            Terminal.print(HelpText.usage)
            exit(0)
        case "help":
            HelpText.printTopic(rest.first)
        case "--version", "-V", "version":
            Terminal.print("portcullis \(PortcullisVersion.current)")
            exit(0)
        default:
            Terminal.fail("unknown command \"\(command)\" (see `portcullis --help`)")
        }
    }
}
