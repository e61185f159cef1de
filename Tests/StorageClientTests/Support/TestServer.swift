import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The shared server's process, stopped when the test process exits (`atexit`).
nonisolated(unsafe) private var sharedServerPID: pid_t = 0

/// A real `portcullis serve` process on a free loopback port with its own data directory, rules, signing key
/// and admin key — what the SDK and CLI tests talk to. Started once per test process and shared.
final class TestServer: @unchecked Sendable {
    let port: Int
    let directory: URL
    let process: Process
    /// The file given to `--admin-key`, and its key.
    let adminKeyFile: URL
    let adminKey: String
    var baseURL: String { "http://127.0.0.1:\(port)" }
    static let bucket = "test-bucket"

    /// Everything under `ok/` and `photos/` (the README example) is readable and writable by anyone; nothing else is.
    static let rules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /ok/{rest=**} {
              allow read, write: if true;
            }
            match /photos/{rest=**} {
              allow read, write: if true;
            }
          }
        }
        """

    static let shared: TestServer = {
        do { return try TestServer() } catch { fatalError("cannot start portcullis for tests: \(error)") }
    }()

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "portcullis-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let rulesFile = directory.appendingPathComponent("storage.rules")
        try Self.rules.write(to: rulesFile, atomically: true, encoding: .utf8)
        let keyFile = directory.appendingPathComponent("signing.key")
        try "test:\(Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())\n"
            .write(to: keyFile, atomically: true, encoding: .utf8)
        let key = "test-admin-key-\(UUID().uuidString)"
        adminKey = key
        adminKeyFile = directory.appendingPathComponent("admin.key")
        try "\(key)\n".write(to: adminKeyFile, atomically: true, encoding: .utf8)
        port = try Self.freePort()
        process = Process()
        process.executableURL = Self.binary()
        process.arguments = [
            "serve", "--listen", "127.0.0.1:\(port)",
            "--bucket", "\(Self.bucket)=file:\(directory.appendingPathComponent("data").path)",
            "--rules", rulesFile.path, "--signing-key", keyFile.path, "--admin-key", adminKeyFile.path,
            "--log-format", "text",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // `shared` is never deinitialised: without this the server outlives every test run.
        sharedServerPID = process.processIdentifier
        atexit { if sharedServerPID > 0 { kill(sharedServerPID, SIGTERM) } }
        try waitUntilReady()
    }

    deinit { process.terminate() }

    /// The `portcullis` executable built next to the test bundle (or `PORTCULLIS_BIN`).
    static func binary() -> URL {
        if let path = ProcessInfo.processInfo.environment["PORTCULLIS_BIN"] { return URL(fileURLWithPath: path) }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("portcullis")
            if FileManager.default.isExecutableFile(atPath: candidate.path),
                !candidate.hasDirectoryPath
            {
                return candidate
            }
            dir.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/portcullis")
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Polls `/readyz` (never a blind sleep) for up to 20 s.
    private func waitUntilReady() throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else { throw POSIXError(.ECHILD) }
            if readyStatus() == 200 { return }
            usleep(50_000)
        }
        throw POSIXError(.ETIMEDOUT)
    }

    private func readyStatus() -> Int {
        let semaphore = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var status = 0 }
        let box = Box()
        URLSession.shared.dataTask(with: URL(string: "\(baseURL)/readyz")!) { _, response, _ in
            box.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            semaphore.signal()
        }.resume()
        semaphore.wait()
        return box.status
    }

    /// Writes an object directly through the v0 media-upload endpoint (to change it behind a task's back).
    func overwrite(_ name: String, with data: Data) async throws {
        var request = URLRequest(
            url: URL(
                string:
                    "\(baseURL)/v0/b/\(Self.bucket)/o?name=\(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name)"
            )!)
        request.httpMethod = "POST"
        request.httpBody = data
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let (_, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
    }
}
