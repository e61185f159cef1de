import ChildProcessIO
import Foundation
import StorageClient
import Testing

/// The README's Swift and CLI examples, run for real. Keep the README in sync with these bodies.
@Suite(.serialized) struct ReadmeExampleTests {
    let server = TestServer.shared

    @Test func swiftExample() async throws {
        let host = "127.0.0.1:\(server.port)"
        // README: Swift client SDK (begin)
        let storage = Storage(bucket: "test-bucket", host: host, tokenProvider: { nil /* your ID token */ })
        let ref = storage.reference(withPath: "photos/2024/cat.txt")
        let metadata = try await ref.putData(
            Data("meow".utf8),
            metadata: StorageMetadata(contentType: "text/plain")
        ).result()
        let bytes = try await ref.getData(maxSize: 1 << 20)
        let page = try await storage.reference(withPath: "photos").list(maxResults: 100)
        let url = try await ref.downloadURL()
        // README: Swift client SDK (end)
        #expect(metadata.size == 4)
        #expect(bytes == Data("meow".utf8))
        #expect(page.prefixes.map(\.fullPath).contains("photos/2024"))
        #expect(url.absoluteString.contains("token="))
    }

    @Test func cliExample() throws {
        let cli = TestServer.binary().deletingLastPathComponent().appendingPathComponent("portcullis-cli")
        let local = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).txt")
        try Data("from the cli\n".utf8).write(to: local)
        defer { try? FileManager.default.removeItem(at: local) }
        func run(_ arguments: [String]) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = cli
            process.arguments = ["--server", server.baseURL] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readToEndRetryingInterrupts()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output, as: UTF8.self))
        }
        let target = "gs://test-bucket/photos/cli/notes.txt"
        let upload = try run(["cp", local.path, target])
        #expect(upload.0 == 0)
        #expect(upload.1.contains("13 bytes"))
        let listing = try run(["ls", "gs://test-bucket/photos/cli/"])
        #expect(listing.1.contains(target))
        let stat = try run(["stat", target])
        #expect(stat.1.contains("size: 13"))
        let meta = try run(["set-meta", "--cache-control", "no-cache", "--meta", "team=ops", target])
        #expect(meta.0 == 0)
        #expect(try run(["stat", target]).1.contains("metadata.team: ops"))
        let url = try run(["url", target])
        #expect(url.1.contains("alt=media&token="))
        let download = local.appendingPathExtension("copy")
        #expect(try run(["cp", target, download.path]).0 == 0)
        #expect(try Data(contentsOf: download) == Data("from the cli\n".utf8))
        try? FileManager.default.removeItem(at: download)
        #expect(try run(["rm", target]).0 == 0)
        let missing = try run(["stat", target])
        #expect(missing.0 == 1)
        #expect(missing.1.contains("not found: \(target)"))
        #expect(
            try run(["stat", "gs://test-bucket/denied/x"]).1.contains("permission denied: gs://test-bucket/denied/x"))
    }
}
