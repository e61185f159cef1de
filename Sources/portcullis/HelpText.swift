import Gateway

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis --help` (one line per command) and the long help of `serve` (generated from
/// `ConfigurationOption.all`, so it always lists every option); other commands keep theirs beside their code.
enum HelpText {
    static let usage = """
        portcullis — a self-hosted gateway speaking the Cloud Storage for Firebase REST protocol

        Usage:
          portcullis serve [OPTIONS]                      run the gateway
          portcullis rules check FILE                     compile a rules file; print file:line:col errors
          portcullis rules test FILE CASES.json [--explain]
                                                          run rules test cases; print failures and a summary
          portcullis token (--key FILE | --hmac-secret FILE) [OPTIONS]
                                                          mint a development JWT
          portcullis events list --dir DIR [--dead]       change events waiting in an embedded outbox
          portcullis events redeliver --dir DIR ID...     retry dead-lettered events
          portcullis service-account create NAME (--admin | --uid U [--claims JSON]) [OPTIONS]
                                                          issue a service-account key file
          portcullis help [COMMAND] | --help | --version

        `portcullis help COMMAND` (or `portcullis COMMAND --help`) prints a command's options in full.
        Exit status: 0 success, 1 failed check or test, 2 usage or configuration error.
        """

    /// `portcullis help [COMMAND]`: the overview, or one command's long help; an unknown topic exits 2.
    static func printTopic(_ topic: String?) -> Never {
        switch topic {
        case nil: Terminal.print(usage)
        case "serve"?: Terminal.print(serve)
        case "rules"?: Terminal.print(RulesCommand.help)
        case "token"?: Terminal.print(TokenCommand.help)
        case "events"?: Terminal.print(EventsCommand.help)
        case "service-account"?: Terminal.print(ServiceAccountCommand.help)
        case let other?:
            Terminal.fail(
                "help: unknown command \"\(other)\" (commands: serve, rules, token, events, service-account)")
        }
        exit(0)
    }

    static var serve: String {
        var out = """
            portcullis serve [OPTIONS]

            Every option is also an environment variable; a flag wins over its variable. Flags take
            `--flag VALUE` or `--flag=VALUE`.

            Options:

            """
        for option in ConfigurationOption.all {
            out += "  --\(option.flag)" + (option.isSwitch ? "" : " \(option.valueName)")
            if option.repeatable { out += " (repeatable)" }
            out += "\n      env \(option.environment)"
            out += "   default: " + (option.defaultText ?? "none")
            out += "\n      \(option.summary.replacingBackticks())\n"
        }
        out += """

            Endpoints: GET /healthz (alive), GET /readyz (503 while starting, draining or a backend is down),
            GET /metrics (Prometheus), the v0 API under /v0/b/{bucket}/o, the Cloud Storage JSON API
            under /storage/v1, /upload/storage/v1 and /download/storage/v1, the web console at /console/
            (--console off removes it) and POST /admin/v1/rules/explain (admin).
            Signals: SIGTERM/SIGINT drain in-flight requests (up to --drain-timeout) then exit 0; a second
            signal exits at once. SIGHUP reloads the rules file.

            """
        return out
    }
}

extension String {
    fileprivate func replacingBackticks() -> String { split(separator: "`", omittingEmptySubsequences: false).joined() }
}
