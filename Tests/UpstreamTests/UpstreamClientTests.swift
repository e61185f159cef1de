import Foundation
import PortcullisCore
import Testing

@testable import Upstream

@Suite struct UpstreamClientTests {
    @Test func fetchBuffersASmallBody() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let result = try await client.fetch(UpstreamRequest(url: "\(server.base)/bytes?n=1000"), maxBytes: 4096)
        #expect(result.status == 200)
        #expect(result.body == expectedPattern(1000))
        #expect(result.headers.first(ignoringCase: "content-length") == "1000")
        #expect(client.activeTransfers == 0)
    }

    /// The client's own thread holds its host until the client is gone and its transfers are over, then exits: a
    /// process that makes clients (tests, key fetchers) does not collect threads.
    @Test func aDroppedClientsLoopThreadExits() async throws {
        final class Watch: @unchecked Sendable { weak var loop: CurlLoopThread? }
        let server = try await TestServer.start()
        let watch = Watch()
        do {
            let client = UpstreamClient()
            let result = try await client.fetch(UpstreamRequest(url: "\(server.base)/bytes?n=10"), maxBytes: 100)
            #expect(result.status == 200)
            watch.loop = client.ownThread
        }
        try await waitUntil { watch.loop == nil }
    }

    @Test func fetchRefusesBodiesOverTheLimit() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        await #expect(throws: UpstreamError.tooLarge(limit: 100)) {
            _ = try await client.fetch(UpstreamRequest(url: "\(server.base)/bytes?n=1000"), maxBytes: 100)
        }
        try await waitUntil { client.activeTransfers == 0 }
    }

    @Test func sendsBytesBodiesAndHeaders() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let body = expectedPattern(300_000)
        for method in ["POST", "PUT", "PATCH"] {
            let result = try await client.fetch(
                UpstreamRequest(
                    method: method, url: "\(server.base)/echo",
                    headers: [("X-Custom", "v1"), ("traceparent", "00-abc-def-01")],
                    body: .bytes(body)), maxBytes: 1 << 20)
            #expect(result.status == 200)
            #expect(result.headers.first(ignoringCase: "x-method") == method)
            #expect(result.body == body)
            let echoed = try JSONValue.parse(result.headers.first(ignoringCase: "x-headers") ?? "")
            #expect(echoed["x-custom"]?.stringValue == "v1")
            #expect(echoed["traceparent"]?.stringValue == "00-abc-def-01")
            #expect(echoed["expect"] == nil)
        }
    }

    @Test func postWithoutBodySendsContentLengthZero() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let result = try await client.fetch(UpstreamRequest(method: "POST", url: "\(server.base)/echo"), maxBytes: 1024)
        #expect(result.status == 200)
        #expect(result.headers.first(ignoringCase: "x-length") == "0")
        let echoed = try JSONValue.parse(result.headers.first(ignoringCase: "x-headers") ?? "")
        #expect(echoed["content-length"]?.stringValue == "0")
    }

    @Test func streamsARequestBodyOfUnknownLength() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let body = expectedPattern(1_500_000)
        let stream = SlowStream(BufferByteStream(body), chunk: 100_000)
        let result = try await client.fetch(
            UpstreamRequest(
                method: "PUT", url: "\(server.base)/echo", body: .stream(stream, length: nil)), maxBytes: 2 << 20)
        #expect(result.status == 200)
        #expect(result.body == body)
        let echoed = try JSONValue.parse(result.headers.first(ignoringCase: "x-headers") ?? "")
        #expect(echoed["transfer-encoding"]?.stringValue == "chunked")
    }

    @Test func streamsARequestBodyOfKnownLength() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let body = expectedPattern(700_000)
        let result = try await client.fetch(
            UpstreamRequest(
                method: "POST", url: "\(server.base)/echo",
                body: .stream(SlowStream(BufferByteStream(body), chunk: 50_000), length: Int64(body.count))),
            maxBytes: 1 << 20)
        #expect(result.body == body)
        #expect(result.headers.first(ignoringCase: "x-length") == "700000")
    }

    @Test func headReturnsHeadersAndAnEmptyBody() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let result = try await client.fetch(
            UpstreamRequest(method: "HEAD", url: "\(server.base)/bytes?n=5000"),
            maxBytes: 10)
        #expect(result.status == 200)
        #expect(result.body.isEmpty)
        #expect(result.headers.first(ignoringCase: "Content-Length") == "5000")
    }

    @Test func reusesConnections() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        for _ in 0..<10 {
            _ = try await client.fetch(UpstreamRequest(url: "\(server.base)/bytes?n=10"), maxBytes: 100)
        }
        let count = try await client.fetch(UpstreamRequest(url: "\(server.base)/connections"), maxBytes: 100)
        #expect(String(decoding: count.body, as: UTF8.self) == "1")
    }

    /// Refused before anything is sent, however the line break is spelled: CR LF (one `Character`), a lone CR or
    /// LF, LF with a combining mark (one `Character` again), NUL (curl would cut the line there).
    @Test func malformedHeadersAreRefusedBeforeConnecting() async throws {
        let server = try await TestServer.start()
        let client = UpstreamClient()
        let malformed: [(String, String)] = [
            ("X", "a\r\nInjected: 1"), ("X", "a\rb"), ("X", "a\nb"), ("X", "a\n\u{301}Injected: 1"), ("X", "a\u{0}b"),
            ("", "v"), ("X Y", "v"), ("X:Y", "v"), ("X\r\n", "v"), ("X\u{7F}", "v"), ("X\t", "v"),
        ]
        var requests = malformed.map { UpstreamRequest(url: "\(server.base)/echo", headers: [$0]) }
        requests.append(UpstreamRequest(method: "G\u{C9}T", url: "\(server.base)/echo"))
        for request in requests {
            do {
                _ = try await client.send(request)
                Issue.record("\(request.method) \(request.headers) was sent")
            } catch {
                guard case .invalidRequest = error else {
                    Issue.record("\(request.method) \(request.headers): \(error)")
                    continue
                }
            }
        }
        let count = try await client.fetch(UpstreamRequest(url: "\(server.base)/connections"), maxBytes: 100)
        #expect(String(decoding: count.body, as: UTF8.self) == "1")

        let echoed = try await client.fetch(
            UpstreamRequest(url: "\(server.base)/echo", headers: [("X-Note", "caf\u{E9} \u{301}ok")]), maxBytes: 10_000)
        #expect(echoed.status == 200)
    }
}

/// Polls `condition` until it holds (or fails the test after `timeout` seconds).
func waitUntil(timeout: Double = 10, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("condition not met within \(timeout) s")
            return
        }
        try await Task.sleep(nanoseconds: 5_000_000)
    }
}

/// Hands out a wrapped stream's bytes in chunks of at most `chunk`, yielding between them.
final class SlowStream: ByteStream {
    let base: any ByteStream
    let chunk: Int
    let delayNanoseconds: UInt64
    init(_ base: any ByteStream, chunk: Int, delayNanoseconds: UInt64 = 0) {
        self.base = base
        self.chunk = chunk
        self.delayNanoseconds = delayNanoseconds
    }
    var expectedLength: Int64? { nil }
    func next(maxLength: Int) async throws -> [UInt8]? {
        if delayNanoseconds > 0 { try await Task.sleep(nanoseconds: delayNanoseconds) } else { await Task.yield() }
        return try await base.next(maxLength: min(maxLength, chunk))
    }
    func cancel() { base.cancel() }
}
