import ChildProcessIO
import Foundation
import Synchronization
import Upstream

@testable import Auth

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real HTTP server on 127.0.0.1:<free port> (Python's http.server) serving one directory, adding
/// `Cache-Control: max-age=<maxAge>`. Tests rewrite files in `directory` to rotate keys.
final class LoopbackKeyServer: @unchecked Sendable {
    let directory: URL
    let port: Int
    private let process: Process
    private let stdin = Pipe()

    static let script = """
        import http.server, socketserver, sys, os, signal, threading
        # The test runner may leave SIGTERM ignored/blocked in children: restore it, and also exit when the
        # parent goes away (stdin closes), so no server outlives its test.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        os.chdir(sys.argv[1])
        max_age = sys.argv[2]
        class H(http.server.SimpleHTTPRequestHandler):
            def end_headers(self):
                self.send_header("Cache-Control", "public, max-age=" + max_age)
                super().end_headers()
            def log_message(self, *args):
                pass
        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
        s = S(("127.0.0.1", 0), H)
        print(s.server_address[1], flush=True)
        s.serve_forever()
        """

    init(maxAge: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pc-jwks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, directory.path, String(maxAge)]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = stdin
        try process.run()
        // The first stdout line is the bound port (the server is listening once it is printed).
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = (out.fileHandleForReading.readChunkRetryingInterrupts() ?? Data())
            guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
            line.append(chunk)
        }
        port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))!
    }

    deinit {
        // SIGTERM ends the server; waiting here (waitUntilExit spins a run loop) can hang a test's executor thread.
        process.terminate()
        try? stdin.fileHandleForWriting.close()
        try? FileManager.default.removeItem(at: directory)
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    func write(_ name: String, _ text: String) throws {
        // Write-then-rename so the server never serves a half-written file.
        let temporary = directory.appendingPathComponent(".\(name).tmp")
        try Data(text.utf8).write(to: temporary)
        guard rename(temporary.path, directory.appendingPathComponent(name).path) == 0 else {
            throw CocoaError(.fileWriteUnknown)
        }
    }
}

/// The production fetcher (UpstreamKeyFetcher over libcurl), counting requests.
final class CountingKeyFetcher: KeyDocumentFetcher {
    private let counter = Mutex(0)
    /// Timeouts far above the production defaults (5/10/10 s): these tests check what is fetched, and in a
    /// parallel `swift test` on two cores a transfer can go unserviced for longer than 10 s (curl's low-speed
    /// check then fails it as idle). The timeouts themselves are tested in `TransferLifecycleTests`.
    private let inner = UpstreamKeyFetcher(
        client: UpstreamClient(), timeouts: UpstreamTimeouts(connect: 60, firstByte: 60, idle: 60))
    var requests: Int { counter.withLock { $0 } }

    func fetch(_ url: String) async throws -> (body: [UInt8], maxAgeSeconds: Int?) {
        counter.withLock { $0 += 1 }
        return try await inner.fetch(url)
    }
}

/// A second, independent HTTP client (Foundation's URLSession) for cross-checking the fetcher.
final class URLSessionKeyFetcher: KeyDocumentFetcher {
    func fetch(_ url: String) async throws -> (body: [UInt8], maxAgeSeconds: Int?) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(from: URL(string: url)!)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            throw URLError(.badServerResponse)
        }
        return ([UInt8](data), CacheControl.maxAge(http.value(forHTTPHeaderField: "Cache-Control")))
    }
}
