import Foundation
import Testing

/// `portcullis-cli` as a user runs it: the built executable against the live test server, checking exit
/// statuses (0 ok, 1 failure, 2 usage), what stdout says and that every failure is one line on stderr.
@Suite(.serialized) struct CLITests {
    let server = TestServer.shared

    // MARK: help, version, usage errors

    @Test func versionAndOverview() async throws {
        let version = try await CLI.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("portcullis-cli "))
        #expect(version.stdout.split(separator: "\n").count == 1)
        let help = try await CLI.run(["--help"])
        #expect(help.status == 0)
        for command in ["ls", "stat", "cp", "rm", "mirror", "url", "set-meta", "completion", "help"] {
            #expect(help.stdout.contains("\n  \(command) "), "overview lists \(command)")
        }
        #expect(help.stdout.contains("0 success, 1 failure"))
        #expect(try await CLI.run(["help"]).stdout == help.stdout)
    }

    @Test(arguments: ["ls", "stat", "cp", "rm", "mirror", "url", "set-meta", "completion", "help"])
    func everyCommandHasItsOwnHelp(command: String) async throws {
        for arguments in [[command, "--help"], [command, "-h"], ["help", command], [command, "gs://b/x", "--help"]] {
            let result = try await CLI.run(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stdout.hasPrefix("usage: portcullis-cli [GLOBAL OPTIONS] \(command) "), "\(arguments)")
            #expect(result.stdout.contains("--help"))
            #expect(result.stderr.isEmpty)
        }
    }

    @Test(arguments: [
        [], ["nope"], ["--nope", "ls"], ["cp", "--nope", "a", "gs://b/c"], ["cp", "onlyone"], ["ls"],
        ["stat", "not-a-url"], ["stat", "gs://b/x", "gs://b/y"], ["ls", "--page-size", "0", "gs://b/"],
        ["ls", "--page-size"], ["stat", "--json=yes", "gs://b/x"], ["--auth-scheme", "basic", "ls", "gs://b/"],
        ["--retry-time", "soon", "ls", "gs://b/"], ["--admin-key", "k", "--token", "t", "ls", "gs://b/"],
        ["completion", "fish"], ["help", "nope"], ["url", "--expires", "60", "gs://b/x"],
        ["set-meta", "--meta", "novalue", "gs://b/x"], ["cp", "-r", "gs://b/x", "-"], ["cp", "a", "b"],
    ])
    func usageErrorsExit2WithOneLine(arguments: [String]) async throws {
        let result = try await CLI.run(["--server", server.baseURL] + arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        if !arguments.isEmpty {
            #expect(result.stderr.hasPrefix("portcullis-cli: "), "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }

    // MARK: operations

    @Test func uploadStatDownloadRemove() async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let local = directory.appendingPathComponent("notes.txt")
        let body = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try body.write(to: local)
        let target = "gs://test-bucket/ok/cli-tests/notes.txt"
        let g = ["--server", server.baseURL]

        let upload = try await CLI.run(g + ["cp", local.path, target])
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(upload.stdout.hasPrefix("\(target) 70000 bytes md5="))
        #expect(upload.stdout.split(separator: "\n").count == 1)

        let stat = try await CLI.run(g + ["stat", target])
        #expect(stat.status == 0)
        let lines = stat.stdout.split(separator: "\n").map(String.init)
        #expect(lines.prefix(3) == ["bucket: test-bucket", "name: ok/cli-tests/notes.txt", "size: 70000"])
        #expect(lines.allSatisfy { $0.contains(": ") })

        let json = try await CLI.run(g + ["stat", "--json", target])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["name"] as? String == "ok/cli-tests/notes.txt")
        #expect(object["size"] as? String == "70000")
        #expect(object["bucket"] as? String == "test-bucket")

        let copy = directory.appendingPathComponent("copy.bin")
        let download = try await CLI.run(g + ["cp", target, copy.path])
        #expect(download.status == 0, "\(download.stderr)")
        #expect(download.stdout == "\(copy.path) 70000 bytes\n")
        #expect(try Data(contentsOf: copy) == body)

        // Into a directory: the object's name is kept.
        let into = try await CLI.run(g + ["cp", target, directory.path + "/"])
        #expect(into.stdout == "\(directory.appendingPathComponent("notes.txt").path) 70000 bytes\n")

        #expect(try await CLI.run(g + ["rm", target]).status == 0)
        let missing = try await CLI.run(g + ["stat", target])
        #expect(missing.status == 1)
        #expect(missing.stderr == "portcullis-cli: not found: \(target)\n", "\(missing.stderr)")
        #expect(missing.stderr.split(separator: "\n").count == 1)
    }

    @Test func theAdminKeyActsAsAdminInEitherScheme() async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let local = directory.appendingPathComponent("a.txt")
        try Data("admin only".utf8).write(to: local)
        let g = ["--server", server.baseURL]
        // The rules allow nothing outside ok/ and photos/.
        let anonymous = try await CLI.run(g + ["cp", local.path, "gs://test-bucket/admin-area/a.txt"])
        #expect(anonymous.status == 1)
        #expect(anonymous.stderr == "portcullis-cli: permission denied: gs://test-bucket/admin-area/a.txt\n")
        for scheme in [[], ["--auth-scheme", "firebase"], ["--auth-scheme", "bearer"]] {
            let admin = g + ["--admin-key", server.adminKeyFile.path] + scheme
            let upload = try await CLI.run(admin + ["cp", local.path, "gs://test-bucket/admin-area/a.txt"])
            #expect(upload.status == 0, "\(scheme): \(upload.stderr)")
            let stat = try await CLI.run(admin + ["stat", "gs://test-bucket/admin-area/a.txt"])
            #expect(stat.stdout.contains("size: 10"), "\(scheme)")
            #expect(try await CLI.run(admin + ["rm", "gs://test-bucket/admin-area/a.txt"]).status == 0)
        }
        // The same key as a plain token, from the environment, in the Bearer scheme.
        let viaEnvironment = try await CLI.run(
            g + ["stat", "gs://test-bucket/admin-area/none"],
            environment: [
                "PORTCULLIS_TOKEN": server.adminKey,
                "PORTCULLIS_AUTH_SCHEME": "bearer",
            ])
        #expect(viaEnvironment.stderr.contains("not found: gs://"), "admin sees the object is missing, not 403")
        let unreadable = try await CLI.run(
            g + [
                "--admin-key", directory.appendingPathComponent("none").path,
                "stat", "gs://test-bucket/x",
            ])
        #expect(unreadable.status == 1)
        #expect(unreadable.stderr.split(separator: "\n").count == 1)
    }

    @Test func aRefusedConnectionIsOneReadableLine() async throws {
        let port = try TestServer.freePort()
        for arguments in [
            ["stat", "gs://test-bucket/ok/x"], ["cp", "gs://test-bucket/ok/x", "/tmp/never-written"],
            ["ls", "gs://test-bucket/ok/"],
        ] {
            let result = try await CLI.run(["--server", "http://127.0.0.1:\(port)", "--retry-time", "0.2"] + arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(
                result.stderr.contains("could not connect to 127.0.0.1:\(port) (connection refused)"),
                "\(arguments): \(result.stderr)")
        }
    }

    @Test func anUnknownHostIsOneReadableLine() async throws {
        let result = try await CLI.run([
            "--server", "http://portcullis-test.invalid:8080", "--retry-time", "0",
            "stat", "gs://test-bucket/ok/x",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("could not resolve host portcullis-test.invalid"), "\(result.stderr)")
    }
}

/// Runs the built `portcullis-cli` (next to the test bundle) without blocking a cooperative thread.
enum CLI {
    struct Result: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The `portcullis-cli` built with the tests (a directory above the test bundle), else the one beside the
    /// server binary.
    static var executable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("portcullis-cli")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return TestServer.binary().deletingLastPathComponent().appendingPathComponent("portcullis-cli")
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Swift.Result { try runBlocking(arguments, environment: environment) })
            }
        }
    }

    private static func runBlocking(_ arguments: [String], environment: [String: String]) throws -> Result {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("stdout"), err = directory.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PORTCULLIS_") }
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "portcullis-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
