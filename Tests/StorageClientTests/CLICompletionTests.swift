import ChildProcessIO
import Foundation
import Testing

/// `portcullis-cli completion bash|zsh`: the scripts parse, and bash completes commands, options and option
/// values from the CLI's own command table.
@Suite struct CLICompletionTests {
    /// Runs `script` in a non-interactive bash and returns its stdout.
    private func bash(_ script: String) async throws -> String {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("test.sh")
        try script.write(to: file, atomically: true, encoding: .utf8)
        return try await Self.shell("bash", file.path)
    }

    private static func shell(_ name: String, _ arguments: String...) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                        process.arguments = [name] + arguments
                        let pipe = Pipe()
                        process.standardOutput = pipe
                        process.standardError = pipe
                        try process.run()
                        let output = pipe.fileHandleForReading.readToEndRetryingInterrupts()
                        process.waitUntilExit()
                        return String(decoding: output, as: UTF8.self)
                            + (process.terminationStatus == 0 ? "" : "[exit \(process.terminationStatus)]")
                    })
            }
        }
    }

    @Test func bashCompletesCommandsOptionsAndValues() async throws {
        let script = try await CLI.run(["completion", "bash"])
        #expect(script.status == 0)
        let output = try await bash(
            """
            set -e
            \(script.stdout)
            t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _portcullis_cli; echo "${COMPREPLY[*]}"; }
            t portcullis-cli ""
            t portcullis-cli c
            t portcullis-cli --ver
            t portcullis-cli --auth-scheme ""
            t portcullis-cli --server http://x:1 st
            t portcullis-cli cp --r
            t portcullis-cli set-meta --
            t portcullis-cli completion ""
            t portcullis-cli help se
            t portcullis-cli ls --page-size ""
            """)
        #expect(
            output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) == [
                "ls stat cp rm mirror url set-meta completion help",
                "cp completion",
                "--version",
                "firebase bearer",
                "stat",
                "--recursive",
                "--content-type --cache-control --meta --remove-meta --help",
                "bash zsh",
                "set-meta",
                "",
                "",
            ])
    }

    @Test func zshScriptRegistersTheCompletionAndParses() async throws {
        let script = try await CLI.run(["completion", "zsh"])
        #expect(script.status == 0)
        #expect(script.stdout.hasPrefix("#compdef portcullis-cli\n"))
        for command in ["ls", "stat", "cp", "rm", "url", "set-meta", "completion", "help"] {
            #expect(script.stdout.contains("'\(command):"), "\(command) listed")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") else { return }  // zsh is optional here
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("_portcullis-cli")
        try script.stdout.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await Self.shell("zsh", "-n", file.path) == "")
        let loaded = try await Self.shell(
            "zsh", "-f", "-c",
            "autoload -Uz compinit && compinit -u && source \(file.path) && print -r -- $_comps[portcullis-cli]")
        #expect(loaded == "_portcullis-cli\n")
    }
}
