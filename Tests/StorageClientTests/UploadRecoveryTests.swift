import Foundation
import Testing

@testable import StorageClient

/// The resumable upload's recovery against a scripted server: after a failure the client must
/// continue from the offset the *server* reports, take an upload the server already finished as done, and
/// fail at once when its own source breaks. Also the `Storage` entry point's URL and token handling.
@Suite struct UploadRecoveryTests {
    static let bucket = "scripted-bucket"

    /// A minimal v0 resumable-upload server: start, query, upload, finalize, plus object metadata. `plan` may
    /// replace the answer to a chunk (it sees the chunk's offset and the server's state).
    final class ResumableScript: @unchecked Sendable {
        var received = Data()
        var final = false
        var events: [String] = []
        var failures: [Int64: (ResumableScript, Data) -> ScriptedServer.Response?] = [:]
        let port: () -> Int

        init(port: @escaping () -> Int) { self.port = port }

        func metadata(name: String) -> Data {
            let json =
                #"{"bucket":"\#(UploadRecoveryTests.bucket)","name":"\#(name)","size":"\#(received.count)","#
                + #""generation":"7","metageneration":"1","contentType":"application/octet-stream"}"#
            return Data(json.utf8)
        }

        func handle(_ request: ScriptedServer.Request) -> ScriptedServer.Response {
            let command = request.headers["x-goog-upload-command"] ?? ""
            if request.method == "GET" {
                events.append("get")
                return .init(status: 200, body: metadata(name: "big.bin"))
            }
            if command == "start" {
                events.append("start")
                return .init(
                    status: 200,
                    headers: [
                        ("X-Goog-Upload-URL", "http://127.0.0.1:\(port())/upload/1"),
                        ("X-Goog-Upload-Status", "active"),
                        ("X-Goog-Upload-Chunk-Granularity", "8"),
                    ])
            }
            if command == "query" {
                events.append("query")
                return .init(
                    status: 200,
                    headers: [
                        ("X-Goog-Upload-Status", final ? "final" : "active"),
                        ("X-Goog-Upload-Size-Received", String(received.count)),
                    ])
            }
            let offset = Int64(request.headers["x-goog-upload-offset"] ?? "") ?? -1
            events.append("\(command)@\(offset)")
            guard offset == Int64(received.count), !final else {
                return .init(status: 400, headers: [("X-Goog-Upload-Status", final ? "final" : "active")])
            }
            if let failure = failures.removeValue(forKey: offset), let answer = failure(self, request.body) {
                return answer
            }
            received += request.body
            if command.contains("finalize") {
                final = true
                return .init(status: 200, headers: [("X-Goog-Upload-Status", "final")], body: metadata(name: "big.bin"))
            }
            return .init(status: 200, headers: [("X-Goog-Upload-Status", "active")])
        }
    }

    static func storage(port: Int, retryTime: TimeInterval = 60) -> Storage {
        var settings = StorageSettings()
        settings.uploadChunkSize = 16
        settings.initialRetryDelay = 0.02
        settings.maxUploadRetryTime = retryTime
        settings.maxOperationRetryTime = retryTime
        return Storage(bucket: bucket, host: "127.0.0.1:\(port)", settings: settings)
    }

    static func serve(_ script: ResumableScript) throws -> ScriptedServer {
        try ScriptedServer { script.handle($0) }
    }

    @Test func aRetryableFailureResumesFromTheServersOffsetNotTheClients() async throws {
        let data = patternedData(count: 40, seed: 3)
        var port = 0
        let script = ResumableScript { port }
        // The second chunk (offset 16): the server keeps only its first 8 bytes, then answers 503.
        script.failures[16] = { script, body in
            script.received += body.prefix(8)
            return .init(status: 503, headers: [("X-Goog-Upload-Status", "active")])
        }
        let server = try Self.serve(script)
        defer { server.stop() }
        port = server.port

        let metadata = try await Self.storage(port: port).reference(withPath: "big.bin").putData(data).result()
        #expect(script.received == data, "the object the server holds is not the bytes uploaded")
        #expect(metadata.size == 40)
        #expect(script.events == ["start", "query", "upload@0", "upload@16", "query", "upload, finalize@24"])
    }

    @Test func anUploadTheServerFinishedIsDoneAfterRecovery() async throws {
        let data = patternedData(count: 24, seed: 4)
        var port = 0
        let script = ResumableScript { port }
        // The finalizing chunk is committed, but its answer is lost (a 503 from a proxy, say).
        script.failures[16] = { script, body in
            script.received += body
            script.final = true
            return .init(status: 503)
        }
        let server = try Self.serve(script)
        defer { server.stop() }
        port = server.port

        let metadata = try await Self.storage(port: port).reference(withPath: "big.bin").putData(data).result()
        #expect(metadata.size == 24 && metadata.generation == 7)
        #expect(script.received == data)
        #expect(script.events == ["start", "query", "upload@0", "upload, finalize@16", "query", "get"])
    }

    @Test func aSourceFileThatShrinksFailsAtOnceInsteadOfRetrying() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("shrink-\(UUID().uuidString).bin")
        try patternedData(count: 48, seed: 5).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var port = 0
        let script = ResumableScript { port }
        // While the first chunk is in flight the file loses its tail.
        script.failures[0] = { script, body in
            try? Data(body).write(to: file)
            script.received += body
            return .init(status: 200, headers: [("X-Goog-Upload-Status", "active")])
        }
        let server = try Self.serve(script)
        defer { server.stop() }
        port = server.port

        do {
            _ = try await Self.storage(port: port, retryTime: 20).reference(withPath: "big.bin").putFile(from: file)
                .result()
            Issue.record("an upload whose source shrank succeeded")
        } catch {
            #expect(error.code == .unknown && error.message.contains("changed during upload"), "\(error)")
        }
        // No recovery round: a retried broken source shows as more queries and ends in retryLimitExceeded.
        #expect(script.events == ["start", "query", "upload@0"], "a broken source was retried like a network error")
    }

    @Test(
        arguments: [
            ("http://127.0.0.1:9000", "http://127.0.0.1:9000", nil),
            ("https://storage.example.com/v0/b/my%20bucket", "https://storage.example.com", "my bucket"),
            ("http://[::1]:8080/v0/b/b1", "http://[::1]:8080", "b1"),
        ] as [(String, String, String?)])
    func storageURLsAreParsed(_ url: String, _ base: String, _ bucket: String?) throws {
        let storage = try Storage(url: url)
        #expect(storage.baseURL == base)
        #expect(storage.bucket == bucket)
    }

    @Test(arguments: ["ftp://host/v0/b/x", "host-without-scheme", "http://h/other/path", "http://h/v0/x"])
    func badStorageURLsAreRefused(_ url: String) {
        do {
            _ = try Storage(url: url)
            Issue.record("accepted \(url)")
        } catch {
            #expect(error.code == .invalidArgument, "\(error)")
        }
    }

    @Test func aFailingTokenProviderIsUnauthenticatedAndSendsNothing() async throws {
        struct Broken: Error {}
        var requests = 0
        let server = try ScriptedServer { _ in
            requests += 1
            return .init(status: 200)
        }
        defer { server.stop() }
        let storage = Storage(bucket: Self.bucket, host: "127.0.0.1:\(server.port)", tokenProvider: { throw Broken() })
        do {
            _ = try await storage.reference(withPath: "x").getMetadata()
            Issue.record("a request went out without the token")
        } catch {
            #expect(error.code == .unauthenticated, "\(error)")
        }
        #expect(requests == 0)
    }
}
