import Foundation
import PortcullisCore
import StorageClient

/// `portcullis-cli`: curl-friendly object operations for ops teams, built on the StorageClient SDK.
///
/// A separate executable from the server (`portcullis`) so an ops laptop links only the client library,
/// not the server, SQLite or libcurl upstream code. Usage, options and shell completion all come from the
/// `CommandSpec` table.
@main
struct PortcullisCLI {
    static func main() async {
        var args = Array(CommandLine.arguments.dropFirst())
        var globalArguments = GlobalOptions.leading(&args)
        guard let name = args.first else {
            _ = GlobalOptions.parse(&globalArguments, environment: [:])
            FileHandle.standardError.write(Data(CommandSpec.overview.utf8))
            exit(2)
        }
        args.removeFirst()
        guard let spec = CommandSpec.named(name) else { CLIExit.usage("unknown command \(name)") }
        globalArguments += GlobalOptions.trailing(&args, for: spec)
        let globals = GlobalOptions.parse(&globalArguments, environment: ProcessInfo.processInfo.environment)
        let parsed = ArgumentParser.parse(args, for: spec)

        // Commands that need no server.
        switch spec.name {
        case CommandSpec.helpCommand.name:
            guard let topic = parsed.operands.first else {
                print(CommandSpec.overview, terminator: "")
                CLIExit.success()
            }
            guard parsed.operands.count == 1, let command = CommandSpec.named(topic) else {
                CLIExit.usage("help: unknown command \(topic)", command: spec)
            }
            print(command.usage, terminator: "")
            CLIExit.success()
        case CommandSpec.completion.name:
            guard parsed.operands.count == 1, let shell = ShellCompletion.Shell(rawValue: parsed.operands[0]) else {
                CLIExit.usage("completion needs bash or zsh", command: spec)
            }
            print(ShellCompletion.script(for: shell), terminator: "")
            CLIExit.success()
        default:
            break
        }

        let storage: Storage
        do {
            storage = try globals.storage()
        } catch {
            CLIExit.usage("--server: \(error.message)")
        }
        do {
            try await Commands.run(spec, parsed, storage)
        } catch let failure as TargetedFailure {
            CLIExit.failure(failure.line)
        } catch let error as StorageError {
            CLIExit.failure(Self.describe(error))
        } catch {
            CLIExit.failure((error as NSError).localizedDescription)
        }
    }

    /// A `StorageError` as one line: the server's (or the transport's) message, then for an HTTP answer the
    /// SDK's error code and the status (`Object not found (objectNotFound, HTTP 404)`).
    static func describe(_ error: StorageError) -> String {
        var line = error.message.split(whereSeparator: \.isNewline).joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
        if line.hasSuffix(".") { line.removeLast() }
        if let status = error.httpStatus { line += " (\(error.code), HTTP \(status))" }
        return line
    }
}

/// The options before the command, with their environment fallbacks (a flag wins over its variable).
struct GlobalOptions {
    var server = "http://127.0.0.1:8080"
    var token: String?
    var tokenFile: String?
    var adminKeyFile: String?
    var scheme = "Firebase"
    var retrySeconds: Double = 10

    /// Global options that take a value, by every name.
    static var valued: [String] { CommandSpec.globalOptions.filter { $0.valueName != nil }.flatMap(\.names) }

    /// Removes and returns the options before the command name (with their values).
    static func leading(_ args: inout [String]) -> [String] {
        var taken: [String] = []
        while let first = args.first, first.hasPrefix("-"), first != "-" {
            taken.append(args.removeFirst())
            let (name, inline) = ArgumentParser.split(first)
            if inline == nil, valued.contains(name), !args.isEmpty { taken.append(args.removeFirst()) }
        }
        return taken
    }

    /// Removes and returns the global options given after the command (`cp a gs://b/x --server URL`, as aws-cli
    /// takes them), except names the command itself defines; `--` ends the scan.
    static func trailing(_ args: inout [String], for spec: CommandSpec) -> [String] {
        var taken: [String] = []
        var kept: [String] = []
        var index = 0
        while index < args.count {
            let argument = args[index]
            index += 1
            if argument == "--" {
                kept += args[(index - 1)...]
                break
            }
            let (name, inline) = ArgumentParser.split(argument)
            let own = spec.options.contains { $0.names.contains(name) } || CommandSpec.help.names.contains(name)
            guard argument.hasPrefix("--"), !own, valued.contains(name) else {
                kept.append(argument)
                if let option = spec.options.first(where: { $0.names.contains(name) }), option.valueName != nil,
                    inline == nil, index < args.count
                {
                    kept.append(args[index])
                    index += 1
                }
                continue
            }
            taken.append(argument)
            if inline == nil, index < args.count {
                taken.append(args[index])
                index += 1
            }
        }
        args = kept
        return taken
    }

    /// Consumes the global options at the front of `args` (up to the command name); `--help` and `--version`
    /// print and exit 0, a bad option exits 2.
    static func parse(_ args: inout [String], environment: [String: String]) -> GlobalOptions {
        var options = GlobalOptions()
        func env(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        if let value = env("PORTCULLIS_URL") { options.server = value }
        options.token = env("PORTCULLIS_TOKEN")
        options.tokenFile = env("PORTCULLIS_TOKEN_FILE")
        var schemeText = env("PORTCULLIS_AUTH_SCHEME")
        var retryText = env("PORTCULLIS_RETRY_TIME")
        var tokenFlag = false
        while let first = args.first, first.hasPrefix("-") {
            args.removeFirst()
            let (name, inline) = ArgumentParser.split(first)
            func value() -> String {
                if let inline { return inline }
                guard !args.isEmpty else { CLIExit.usage("\(name) needs a value") }
                return args.removeFirst()
            }
            switch name {
            case "--server": options.server = value()
            case "--token": options.token = value(); options.tokenFile = nil; tokenFlag = true
            case "--token-file": options.tokenFile = value(); options.token = nil; tokenFlag = true
            case "--admin-key": options.adminKeyFile = value()
            case "--auth-scheme": schemeText = value()
            case "--retry-time": retryText = value()
            case "--help", "-h":
                print(CommandSpec.overview, terminator: "")
                CLIExit.success()
            case "--version", "-V":
                print("portcullis-cli \(PortcullisVersion.current)")
                CLIExit.success()
            default: CLIExit.usage("unknown option \(name)")
            }
        }
        if options.adminKeyFile != nil {
            if tokenFlag { CLIExit.usage("--admin-key and --token/--token-file are alternatives: give one") }
            options.token = nil
            options.tokenFile = nil
        }
        if let schemeText {
            switch schemeText.lowercased() {
            case "firebase": options.scheme = "Firebase"
            case "bearer": options.scheme = "Bearer"
            default: CLIExit.usage("--auth-scheme must be firebase or bearer, not \(schemeText)")
            }
        }
        if let retryText {
            guard let seconds = Double(retryText), seconds >= 0, seconds <= 86_400 else {
                CLIExit.usage("--retry-time must be seconds (0-86400), not \(retryText)")
            }
            options.retrySeconds = seconds
        }
        return options
    }

    /// The credential to send: the admin key, the token, or nothing (anonymous). Exits 1 if a file cannot be
    /// read.
    func credential() -> String? {
        if let path = adminKeyFile ?? tokenFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                CLIExit.failure("cannot read \(path)")
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { CLIExit.failure("\(path) is empty") }
            return trimmed
        }
        return token
    }

    func storage() throws(StorageError) -> Storage {
        var settings = StorageSettings()
        settings.authorizationScheme = scheme
        settings.maxOperationRetryTime = retrySeconds
        settings.maxUploadRetryTime = retrySeconds
        settings.maxDownloadRetryTime = retrySeconds
        settings.initialRetryDelay = min(1, max(0.05, retrySeconds / 8))
        let fixed = credential()
        let provider: (@Sendable () async throws -> String?)? = fixed.map { value in { @Sendable in value } }
        return try Storage(url: server, tokenProvider: provider, settings: settings)
    }
}
