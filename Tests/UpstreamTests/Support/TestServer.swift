import ChildProcessIO
import Foundation

/// A Python HTTP server process on 127.0.0.1 with an OS-chosen port (see `testServerScript`).
final class TestServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let stdin = Pipe()

    var base: String { "http://127.0.0.1:\(port)" }

    init() throws {
        let script = FileManager.default.temporaryDirectory
            .appendingPathComponent("portcullis-upstream-test-server-\(UUID().uuidString).py")
        try testServerScript.write(to: script, atomically: true, encoding: .utf8)
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        process.standardOutput = stdout
        process.standardInput = stdin
        try process.run()
        // Reads the one "PORT n" line the server prints once it listens.
        var line = Data()
        while true {
            let byte = (stdout.fileHandleForReading.readChunkRetryingInterrupts(maxLength: 1) ?? Data())
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw TestServerError.noPort(text)
        }
        self.port = port
        try? FileManager.default.removeItem(at: script)
    }

    /// Kills the server at once (the upstream "goes away").
    func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
        }
    }

    deinit { kill() }

    /// Starts a server without blocking a cooperative thread: Python takes a while to come up on a loaded
    /// machine, and a test parked in `readData` starves every other test's continuations (the timing tests
    /// then measure the starvation, not the client).
    static func start() async throws -> TestServer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try TestServer() }) }
        }
    }
}

enum TestServerError: Error { case noPort(String) }

/// A port nothing listens on (bound then closed), for connection-refused tests.
func closedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    close(fd)
    return Int(UInt16(bigEndian: addr.sin_port))
}

/// The byte pattern the test server sends: byte i is `i % 251`.
func expectedPattern(_ n: Int, offset: Int = 0) -> [UInt8] { (0..<n).map { UInt8((offset + $0) % 251) } }
