/// `portcullis-cli completion bash|zsh`: completion scripts generated from the `CommandSpec` table, so every
/// command and option the CLI accepts completes, and nothing else. Local paths complete as files; `gs://` URLs
/// are typed (completing them would need a server round trip per keystroke).
enum ShellCompletion {
    enum Shell: String { case bash, zsh }

    static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        }
    }

    // MARK: - bash

    static func bash() -> String {
        let commands = CommandSpec.all.map(\.name).joined(separator: " ")
        let globals = CommandSpec.globalOptions.flatMap(\.names).joined(separator: " ")
        let globalValued = CommandSpec.globalOptions.filter { $0.valueName != nil }.map(\.name).joined(separator: "|")
        var optionCases = ""
        var valueCases = ""
        var operandCases = ""
        for command in CommandSpec.all {
            let names = (command.options + [CommandSpec.help]).flatMap(\.names).joined(separator: " ")
            optionCases += "        \(command.name)) opts=\"\(names)\" ;;\n"
            for option in command.options where option.valueName != nil {
                valueCases += "        \(command.name):\(option.name)) \(bashValue(option.completion)) ;;\n"
            }
            if command.operands != .none {
                operandCases += "        \(command.name)) \(bashValue(command.operands)) ;;\n"
            }
        }
        for option in CommandSpec.globalOptions where option.valueName != nil {
            valueCases += "        :\(option.name)) \(bashValue(option.completion)) ;;\n"
        }
        return """
            # bash completion for portcullis-cli: source <(portcullis-cli completion bash)
            _portcullis_cli() {
                local cur prev cmd="" opts="" i
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case "${COMP_WORDS[i]}" in
                        \(globalValued)) ((i++)) ;;
                        -*) ;;
                        *) cmd="${COMP_WORDS[i]}"; break ;;
                    esac
                done
                COMPREPLY=()
                if [[ $(_portcullis_cli_takes_value "$cmd" "$prev") == yes ]]; then
                    case "$cmd:$prev" in
            \(valueCases)        esac
                    return 0
                fi
                if [[ -z $cmd ]]; then
                    if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W "\(globals)" -- "$cur"))
                    else
                        COMPREPLY=($(compgen -W "\(commands)" -- "$cur"))
                    fi
                    return 0
                fi
                if [[ $cur == -* ]]; then
                    case "$cmd" in
            \(optionCases)        esac
                    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
                    return 0
                fi
                case "$cmd" in
            \(operandCases)    esac
                return 0
            }
            # Whether OPTION of COMMAND (empty: a global option) takes a value, so the word after it is that value.
            _portcullis_cli_takes_value() {
                case "$1:$2" in
            \(bashTakesValueCases())        *) echo no ;;
                esac
            }
            complete -o bashdefault -o default -F _portcullis_cli portcullis-cli

            """
    }

    private static func bashValue(_ completion: ValueCompletion) -> String {
        switch completion {
        case .none: "COMPREPLY=()"
        case .files: "COMPREPLY=($(compgen -f -- \"$cur\"))"
        case .words(let words): "COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\"))"
        case .commands:
            "COMPREPLY=($(compgen -W \"\(CommandSpec.all.map(\.name).joined(separator: " "))\" -- \"$cur\"))"
        }
    }

    private static func bashTakesValueCases() -> String {
        var patterns = CommandSpec.globalOptions.filter { $0.valueName != nil }.map { ":\($0.name)" }
        for command in CommandSpec.all {
            patterns += command.options.filter { $0.valueName != nil }.map { "\(command.name):\($0.name)" }
        }
        return "        \(patterns.joined(separator: "|"))) echo yes ;;\n"
    }

    // MARK: - zsh

    static func zsh() -> String {
        let commandList = CommandSpec.all.map { "        '\($0.name):\(zshQuoted($0.summary))'" }.joined(
            separator: "\n")
        let globals = CommandSpec.globalOptions.map {
            "        \(zshSpec($0, exclusive: ["--help", "--version"].contains($0.name)))"
        }
        .joined(separator: " \\\n")
        var cases = ""
        for command in CommandSpec.all {
            var specs = (command.options + [CommandSpec.help]).map { zshSpec($0, exclusive: $0.name == "--help") }
            switch command.operands {
            case .none: specs.append("'*:object URL:'")
            case .files: specs.append("'*:file:_files'")
            case .words(let words):
                specs.append(
                    "'1:\(command.name == "completion" ? "shell" : "value"):(\(words.joined(separator: " ")))'")
            case .commands: specs.append("'1:command:(\(CommandSpec.all.map(\.name).joined(separator: " ")))'")
            }
            cases +=
                "            \(command.name))\n                _arguments -s \\\n                    "
                + specs.joined(separator: " \\\n                    ") + "\n                ;;\n"
        }
        return """
            #compdef portcullis-cli
            # zsh completion for portcullis-cli: source <(portcullis-cli completion zsh) after compinit,
            # or save as _portcullis-cli in a directory on $fpath.
            _portcullis-cli() {
                local curcontext="$curcontext" state line
                local -a commands
                commands=(
            \(commandList)
                )
                _arguments -C \\
            \(globals) \\
                    '1:command:->command' \\
                    '*::argument:->argument'
                case $state in
                    command)
                        _describe -t commands 'portcullis-cli command' commands
                        ;;
                    argument)
                        curcontext="${curcontext%:*:*}:portcullis-cli-$words[1]:"
                        case $words[1] in
            \(cases)            esac
                        ;;
                esac
            }
            if [[ "${funcstack[1]}" == "_portcullis-cli" ]]; then
                _portcullis-cli "$@"
            else
                compdef _portcullis-cli portcullis-cli
            fi

            """
    }

    /// One `_arguments` spec: `'(exclusions)--flag[help]:value:action'`, with short aliases as a brace group.
    private static func zshSpec(_ option: OptionSpec, exclusive: Bool) -> String {
        let help =
            "[\(zshQuoted(option.help).replacingOccurrences(of: "[", with: "\\[").replacingOccurrences(of: "]", with: "\\]"))]"
        var value = ""
        if let valueName = option.valueName {
            switch option.completion {
            case .none, .commands: value = ":\(valueName.lowercased()):"
            case .files: value = ":\(valueName.lowercased()):_files"
            case .words(let words): value = ":\(valueName.lowercased()):(\(words.joined(separator: " ")))"
            }
        }
        let repeating = option.repeatable ? "*" : ""
        let exclusion = exclusive ? "(- *)" : (option.names.count > 1 ? "(\(option.names.joined(separator: " ")))" : "")
        if option.names.count > 1 {
            return "'\(exclusion)'\(repeating){\(option.names.joined(separator: ","))}'\(help)\(value)'"
        }
        return "'\(exclusion)\(repeating)\(option.name)\(help)\(value)'"
    }

    /// Text safe inside a single-quoted zsh word and an `_arguments` description.
    private static func zshQuoted(_ text: String) -> String {
        text.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: ":", with: "\\:")
            .replacingOccurrences(of: "`", with: "")
    }
}
