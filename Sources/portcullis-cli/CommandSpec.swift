/// What a command or option accepts, for help text and shell completion alike: one table, so `--help`, the
/// argument checks and `completion bash|zsh` cannot drift apart.
struct OptionSpec: Sendable {
    /// Long name first (`--recursive`), then any short alias (`-r`).
    let names: [String]
    /// Shown as `--flag VALUE`; nil for a switch.
    let valueName: String?
    let help: String
    var completion: ValueCompletion = .none
    /// May be given more than once (each value is kept).
    var repeatable = false

    var name: String { names[0] }
}

/// How a shell completes a value.
enum ValueCompletion: Sendable, Equatable {
    case none
    case files
    case words([String])
    /// The command names (for `help COMMAND`).
    case commands
}

struct CommandSpec: Sendable {
    let name: String
    /// The arguments after the command name, as usage shows them.
    let synopsis: String
    /// One line for the command list.
    let summary: String
    /// More lines for `COMMAND --help`.
    let details: String
    let options: [OptionSpec]
    /// How operands complete (local files for `cp`, words for `completion`).
    let operands: ValueCompletion

    var usage: String {
        var text = "usage: portcullis-cli [GLOBAL OPTIONS] \(name) \(synopsis)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        text += "\nOptions:\n"
        for option in options + [CommandSpec.help] {
            text += CommandSpec.optionLine(option)
        }
        text += "\nGlobal options: see `portcullis-cli --help`. Exit status: 0 ok, 1 failure, 2 usage error.\n"
        return text
    }

    static func optionLine(_ option: OptionSpec) -> String {
        var flags = option.names.joined(separator: ", ")
        if let value = option.valueName { flags += " \(value)" }
        let pad = String(repeating: " ", count: max(1, 26 - flags.count))
        return "  \(flags)\(pad)\(option.help)\n"
    }

    static let help = OptionSpec(names: ["--help", "-h"], valueName: nil, help: "print this help and exit")
}

extension CommandSpec {
    static let recursive = OptionSpec(
        names: ["--recursive", "-r", "-R"], valueName: nil, help: "every object under the prefix")

    static let list = CommandSpec(
        name: "ls", synopsis: "[-r] [--page-size N] gs://BUCKET/PREFIX/",
        summary: "List one folder: its subfolders (ending in /), then its objects.",
        details: """
            Every page is fetched unless --page-size asks for one page; a further page's token is printed as a comment.
            With -r every object under the prefix is listed, one gs:// URL a line, folders walked depth first.
            """,
        options: [
            recursive,
            OptionSpec(names: ["--page-size"], valueName: "N", help: "list one page of at most N entries (1-1000)"),
        ],
        operands: .none)
    static let stat = CommandSpec(
        name: "stat", synopsis: "[--json] gs://BUCKET/OBJECT",
        summary: "Print an object's metadata, one `field: value` per line.",
        details:
            "Lines: bucket, name, size, generation, metageneration, then contentType, contentEncoding, md5Hash,\ncacheControl, updated when set, and metadata.KEY for each custom key.",
        options: [
            OptionSpec(
                names: ["--json"], valueName: nil, help: "print the metadata resource as JSON, as the server sent it")
        ],
        operands: .none)
    static let copy = CommandSpec(
        name: "cp", synopsis: "[-r] [-H 'NAME: VALUE']... SRC DST",
        summary: "Upload (local path → gs://) or download (gs:// → local path); `-` is stdin or stdout.",
        details: """
            An upload ends with one line: the destination, its size in bytes and the MD5 the server computed; a
            download with the local path and its size (nothing when DST is `-`, where the bytes go to stdout).
            Content-Type comes from --header, else from the file name's extension (.txt text/plain, .json
            application/json, .png image/png, …), else application/octet-stream. SRC `-` uploads stdin.
            With -r, SRC is a local directory uploaded under the gs:// folder DST, or a gs:// folder downloaded
            into the local directory DST (created when missing), one line per file.
            """,
        options: [
            OptionSpec(names: ["--recursive", "-r", "-R"], valueName: nil, help: "copy a directory tree or a folder"),
            OptionSpec(
                names: ["--header", "-H"], valueName: "'NAME: VALUE'",
                help:
                    "upload metadata: Content-Type, Cache-Control, Content-Disposition, Content-Encoding, Content-Language, x-goog-meta-KEY (repeatable)",
                repeatable: true),
        ],
        operands: .files)
    static let remove = CommandSpec(
        name: "rm", synopsis: "[-r] gs://BUCKET/OBJECT ...",
        summary: "Delete objects, in order, printing `removed URL` for each; stops at the first failure.",
        details: "With -r each URL is a prefix and every object under it is removed (a prefix with none is not found).",
        options: [recursive], operands: .none)
    static let mirror = CommandSpec(
        name: "mirror", synopsis: "gs://SRC_BUCKET[/PREFIX] gs://DST_BUCKET[/PREFIX]",
        summary: "Copy every object under SRC to DST, keeping metadata and download tokens; resumable.",
        details: """
            Works between any two buckets the gateway serves (say an existing Firebase project's gs:// bucket and
            an embedded or s3:// one). An object whose copy already exists at DST with the same MD5 is skipped,
            so running it again after an interruption copies only what is missing or changed. Download tokens are
            kept only when the caller may set them: use --admin-key.
            On a terminal a progress bar is drawn; otherwise one line per object (`copied`, `skipped`, `failed`).
            Ends with a summary: copied, skipped and failed objects, bytes copied, seconds. Exit 1 if any failed.
            """,
        options: [], operands: .none)
    static let url = CommandSpec(
        name: "url", synopsis: "[--signed [--expires SECONDS]] gs://BUCKET/OBJECT",
        summary: "Print the object's download URL (a token URL), or an expiring signed URL.",
        details: "",
        options: [
            OptionSpec(names: ["--signed"], valueName: nil, help: "an HMAC-signed URL that expires"),
            OptionSpec(names: ["--expires"], valueName: "SECONDS", help: "lifetime of a signed URL (default 3600)"),
        ],
        operands: .none)
    static let setMetadata = CommandSpec(
        name: "set-meta", synopsis: "[OPTIONS] gs://BUCKET/OBJECT",
        summary: "Change an object's metadata; prints the new metageneration.",
        details: "",
        options: [
            OptionSpec(names: ["--content-type"], valueName: "TYPE", help: "set Content-Type"),
            OptionSpec(names: ["--cache-control"], valueName: "VALUE", help: "set Cache-Control"),
            OptionSpec(
                names: ["--meta"], valueName: "KEY=VALUE", help: "set a custom metadata key (repeatable)",
                repeatable: true),
            OptionSpec(
                names: ["--remove-meta"], valueName: "KEY", help: "remove a custom metadata key (repeatable)",
                repeatable: true),
        ],
        operands: .none)
    static let completion = CommandSpec(
        name: "completion", synopsis: "bash|zsh",
        summary: "Print a shell completion script.",
        details: """
            bash:  source <(portcullis-cli completion bash)       (or save it in /etc/bash_completion.d/)
            zsh:   source <(portcullis-cli completion zsh)        (after compinit; or save it as _portcullis-cli
                                                                  in a directory on $fpath)
            """,
        options: [], operands: .words(["bash", "zsh"]))
    static let helpCommand = CommandSpec(
        name: "help", synopsis: "[COMMAND]",
        summary: "Print the overview, or one command's usage.",
        details: "", options: [], operands: .commands)

    /// Every command, in the order the overview lists them.
    static var all: [CommandSpec] { [list, stat, copy, remove, mirror, url, setMetadata, completion, helpCommand] }

    static func named(_ name: String) -> CommandSpec? { all.first { $0.name == name } }

    /// The options before the command.
    static let globalOptions: [OptionSpec] = [
        OptionSpec(
            names: ["--server"], valueName: "URL",
            help: "the Portcullis base URL (env PORTCULLIS_URL; default http://127.0.0.1:8080)"),
        OptionSpec(names: ["--token"], valueName: "TOKEN", help: "ID token to send (env PORTCULLIS_TOKEN)"),
        OptionSpec(
            names: ["--token-file"], valueName: "FILE", help: "read the token from FILE (env PORTCULLIS_TOKEN_FILE)",
            completion: .files),
        OptionSpec(
            names: ["--admin-key"], valueName: "FILE",
            help: "act as admin with the server's --admin-key file (instead of a token)", completion: .files),
        OptionSpec(
            names: ["--auth-scheme"], valueName: "SCHEME",
            help: "Authorization scheme: firebase (default) or bearer (env PORTCULLIS_AUTH_SCHEME)",
            completion: .words(["firebase", "bearer"])),
        OptionSpec(
            names: ["--retry-time"], valueName: "SECONDS",
            help: "how long to retry network errors and 5xx answers (env PORTCULLIS_RETRY_TIME; default 10)"),
        OptionSpec(names: ["--help", "-h"], valueName: nil, help: "print this help and exit"),
        OptionSpec(names: ["--version", "-V"], valueName: nil, help: "print the version and exit"),
    ]

    /// `portcullis-cli --help`: one line per command; `help COMMAND` or `COMMAND --help` has the long form.
    static var overview: String {
        var text = "usage: portcullis-cli [GLOBAL OPTIONS] COMMAND [ARGS...]\n\nCommands:\n"
        let width = all.map(\.name.count).max() ?? 0
        for command in all {
            text += "  \(command.name)" + String(repeating: " ", count: width - command.name.count + 2)
            text += "\(command.summary)\n"
        }
        text += "\nGlobal options (before or after the command):\n"
        for option in globalOptions { text += optionLine(option) }
        text += """

            `portcullis-cli help COMMAND` (or `COMMAND --help`) prints a command's usage.
            Exit status: 0 success, 1 failure (the server refused, a network or file error), 2 usage error.

            """
        return text
    }
}
