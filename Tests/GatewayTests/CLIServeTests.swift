import Foundation
import Gateway
import PortcullisCore
import Testing

/// `portcullis serve` as a real process: readiness, authenticated v0 calls, SIGHUP reload (a bad file keeps
/// the old rules), SIGTERM drain with exit 0.
@Suite struct CLIServeTests {
    final class ServeProcess: @unchecked Sendable {  // used from one test at a time
        let process = Process()
        let logFile: URL
        private(set) var port = 0

        init(arguments: [String], directory: URL) throws {
            logFile = directory.appendingPathComponent("stderr.log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = ["serve", "--listen", "127.0.0.1:0"] + arguments
            process.environment = ["PATH": "/usr/bin:/bin"]
            process.currentDirectoryURL = directory
            process.standardError = try FileHandle(forWritingTo: logFile)
            process.standardOutput = FileHandle.nullDevice
            try process.run()
        }

        var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

        /// Polls the event log until `text` appears `count` times.
        func waitForLog(_ text: String, count: Int = 1, seconds: Double = 20) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while log.components(separatedBy: text).count - 1 < count {
                guard Date() < deadline, process.isRunning else {
                    Issue.record("no \"\(text)\" in log:\n\(log)")
                    throw CancellationError()
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func waitUntilReady() async throws {
            try await waitForLog(#""msg":"portcullis ready""#)
            let line = try #require(log.split(separator: "\n").first { $0.contains("portcullis ready") })
            let object = try #require(try JSONValue.parse(String(line)).objectValue)
            let address = try #require(object["address"]?.stringValue)
            port = try #require(Int(address.split(separator: ":").last ?? ""))
        }

        func send(_ method: String, _ target: String, headers: [String: String] = [:], body: String = "")
            async throws -> LoopbackHTTP.Response
        {
            try await LoopbackHTTP.send(port: port, method, target, headers: headers, body: body)
        }

        deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    }

    @Test func serveReloadAndDrain() async throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rules = directory.appendingPathComponent("storage.rules")
        try CLICommandTests.ownerRules.write(to: rules, atomically: true, encoding: .utf8)
        let secret = directory.appendingPathComponent("hs.key")
        try "integration-test-hmac-secret\n".write(to: secret, atomically: true, encoding: .utf8)

        let server = try ServeProcess(
            arguments: [
                "--rules", rules.path, "--jwt-hmac-secret", secret.path,
                "--bucket", "b=file:\(directory.path)/data", "--drain-timeout", "5",
            ],
            directory: directory)
        try await server.waitUntilReady()
        #expect(try await server.send("GET", "/readyz").status == 200)
        #expect(try await server.send("GET", "/healthz").status == 200)

        let token = try CLI.run(["token", "--hmac-secret", secret.path, "--uid", "alice"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let auth = ["Authorization": "Bearer \(token)"]
        let upload = try await server.send("POST", "/v0/b/b/o?name=users%2Falice%2Fa.txt", headers: auth, body: "hello")
        #expect(upload.status == 200, "\(upload.body)")
        let object = "/v0/b/b/o/users%2Falice%2Fa.txt?alt=media"
        #expect(try await server.send("GET", object, headers: auth).body == "hello")
        #expect(try await server.send("GET", object).status == 403)
        #expect(try await server.send("GET", object, headers: ["Authorization": "Bearer junk"]).status == 401)

        // An invalid new file is reported and the old rules stay.
        try "service firebase.storage { match".write(to: rules, atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        try await server.waitForLog("keeping the previous rules")
        #expect(server.log.contains("storage.rules:1:"))
        #expect(try await server.send("GET", object, headers: auth).status == 200)

        // A valid new file replaces them.
        try
            "rules_version = '2';\nservice firebase.storage { match /b/{bucket}/o/{all=**} { allow read: if false; } }\n"
            .write(to: rules, atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        try await server.waitForLog(#""msg":"rules loaded""#, count: 2)
        #expect(try await server.send("GET", object, headers: auth).status == 403)

        // The token never reaches the logs.
        #expect(!server.log.contains(token))

        kill(server.process.processIdentifier, SIGTERM)
        let exited = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<Int32, any Error>) in
            DispatchQueue.global().async {
                server.process.waitUntilExit()
                continuation.resume(returning: server.process.terminationStatus)
            }
        }
        #expect(exited == 0)
        #expect(server.log.contains("drained"))
    }
}
