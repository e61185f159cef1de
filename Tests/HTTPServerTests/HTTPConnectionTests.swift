import PortcullisCore
import Synchronization
import Testing

@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

private let okHandler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
    HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: .bytes(Array(request.target.utf8)))
}

/// Runs `body` with the path of a new file under /tmp holding `content`; the file is removed afterwards.
private func withTemporaryFile<T: Sendable>(_ content: [UInt8], _ body: (String) async throws -> T) async throws -> T {
    let path = "/tmp/portcullis-http-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    #expect(fd >= 0)
    _ = content.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    defer { unlink(path) }
    return try await body(path)
}

/// Echoes the request body (collected) and its length.
private let echoHandler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
    do {
        let body = try await request.body.collect(limit: 1 << 20)
        return HTTPResponse(status: 200, body: .bytes(body))
    } catch {
        return HTTPResponse(status: 400, body: .bytes(Array("\(error)".utf8)))
    }
}

/// The whole connection layer over real sockets, once per event-loop driver.
@Suite(.serialized) struct HTTPConnectionTests {
    @Test(arguments: EventLoopDriver.available)
    func keepAliveServesSeveralRequestsOnOneConnection(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            for path in ["/a", "/b", "/c"] {
                try client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.text == path)
                #expect(response.header("Content-Length") == "\(path.utf8.count)")
                #expect(response.header("Connection") == "keep-alive")
                #expect(response.header("Date")?.hasSuffix("GMT") == true)
            }
            #expect(server.server.acceptedConnections == 1)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func pipelinedRequestsAreAnsweredInOrder(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { request in
                if request.target == "/slow" { try? await Task.sleep(for: .milliseconds(200)) }
                return await okHandler(request)
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send(
                "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            let bodies = try (0..<3).map { _ in try client.readResponse().text }
            #expect(bodies == ["/slow", "/b", "/c"])
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func burstOfPipelinedRequestsOnTheImmediatePath(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(
                driver: driver,
                responder: ImmediateResponder { request in
                    HTTPResponse(status: 200, body: .bytes(Array(request.target.utf8)))
                })
            defer { server.server.stop() }
            let client = try server.client()
            let count = 2000
            try client.send((0..<count).map { "GET /\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
            let bodies = try (0..<count).map { _ in try client.readResponse().text }
            #expect(bodies == (0..<count).map { "/\($0)" })
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func expectContinueIsSentWhenTheBodyIsPulled(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: echoHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("PUT /u HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            try client.send("hello")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "hello")
            // Still usable.
            try client.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().text == "")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func expectContinueIsNotSentWhenTheResponderAnswersWithoutReading(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(status: 413, body: .bytes(Array("too big".utf8)))
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("PUT /u HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.header("Connection") == "close")
            #expect(try client.isClosedByPeer())
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func requestBodyIsReadOnlyWhileTheResponderPulls(driver: EventLoopDriver) async throws {
        let total = 32 << 20
        let resume = Box<Bool>()
        try await blocking {
            let server = try TestServer(driver: driver) { request in
                var received = 0
                do {
                    if let first = try await request.body.next(maxLength: 65536) { received += first.count }
                    // Stop pulling: the server must stop reading the socket.
                    while resume.current == nil { try await Task.sleep(for: .milliseconds(5)) }
                    while let chunk = try await request.body.next(maxLength: 65536) { received += chunk.count }
                } catch {
                    return HTTPResponse(status: 500)
                }
                return HTTPResponse(status: 200, body: .bytes(Array("\(received)".utf8)))
            }
            defer { server.server.stop() }
            let client = try server.client()
            let body = [UInt8](repeating: 0x61, count: total)
            try client.send("PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: \(total)\r\n\r\n")
            var sent = client.sendUntilFull(body)
            usleep(100_000)
            sent += client.sendUntilFull(Array(body[sent...]))
            // Only what the kernel buffers hold (a few MiB) was accepted; the server is not reading.
            #expect(sent < total / 2)
            resume.set(true)
            try client.send(Array(body[sent...]))
            let response = try client.readResponse()
            #expect(response.text == "\(total)")
        }
    }

    /// `nextPieces` takes every piece already buffered in one hand-off — across chunk boundaries, up to the
    /// end of the body, which the next call reports — where `next` would take one piece per call.
    @Test(arguments: EventLoopDriver.available)
    func aGatheringPullTakesEveryBufferedPiece(driver: EventLoopDriver) async throws {
        let calls = Box<[[String]]>()
        try await blocking {
            let server = try TestServer(driver: driver) { request in
                // The request is one small segment: its body is buffered with the head before the first pull.
                var seen: [[String]] = []
                do {
                    while let pieces = try await request.body.nextPieces(maxLength: 100) {
                        seen.append(pieces.map { String(decoding: $0, as: UTF8.self) })
                    }
                } catch {
                    return HTTPResponse(status: 500)
                }
                calls.set(seen)
                return HTTPResponse(status: 200)
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send(
                "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
            )
            #expect(try client.readResponse().status == 200)
            #expect(calls.current == [["hello", " world"]])
        }
    }

    /// A large body through `nextPieces`: every byte in order, no call over its `maxLength`, no empty piece, and
    /// the connection serves the next request.
    @Test(arguments: EventLoopDriver.available)
    func gatheringPullsDeliverALargeBodyInOrder(driver: EventLoopDriver) async throws {
        let total = 3 << 20 + 12_345
        let body = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        try await blocking {
            let server = try TestServer(driver: driver) { request in
                guard request.target == "/big" else { return HTTPResponse(status: 204) }
                var received: [UInt8] = []
                do {
                    while let pieces = try await request.body.nextPieces(maxLength: 1 << 20) {
                        let size = pieces.reduce(0) { $0 + $1.count }
                        guard !pieces.isEmpty, size <= 1 << 20, pieces.allSatisfy({ !$0.isEmpty }) else {
                            return HTTPResponse(status: 500)
                        }
                        for piece in pieces { received += piece }
                    }
                } catch {
                    return HTTPResponse(status: 500)
                }
                return HTTPResponse(status: received == body ? 200 : 422)
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: \(total)\r\n\r\n")
            try client.send(body)
            #expect(try client.readResponse().status == 200)
            try client.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 204)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func chunkedRequestBody(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: echoHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n")
            usleep(20_000)
            try client.send("6\r\n world\r\n0\r\nTrailer-A: 1\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.text == "hello world")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func chunkedResponseForUnknownLength(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(status: 200, body: .stream(CountingStream(total: 200_000, chunk: 30_000), length: nil))
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Transfer-Encoding") == "chunked")
            #expect(response.header("Content-Length") == nil)
            #expect(response.body.count == 200_000)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().body.count == 200_000)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func streamWithDeclaredLengthUsesContentLength(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(status: 200, body: .stream(CountingStream(total: 100_000), length: 100_000))
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Content-Length") == "100000")
            #expect(response.body.count == 100_000)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func headGetsTheHeadersOfGetWithoutBody(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(status: 200, headers: ["ETag": "\"1\""], body: .bytes(Array("hello".utf8)))
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse(head: true)
            #expect(response.header("Content-Length") == "5")
            #expect(response.header("ETag") == "\"1\"")
            // No body bytes were sent: the next response follows directly.
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().text == "hello")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func http10ClosesByDefaultAndKeepsAliveWhenAsked(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: okHandler)
            defer { server.server.stop() }
            let first = try server.client()
            try first.send("GET /old HTTP/1.0\r\n\r\n")
            let response = try first.readResponse()
            #expect(response.text == "/old")
            #expect(response.header("Connection") == "close")
            #expect(try first.isClosedByPeer())

            let second = try server.client()
            try second.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try second.readResponse().header("Connection") == "keep-alive")
            try second.send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try second.readResponse().text == "/b")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func http10StreamIsCloseDelimited(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(status: 200, body: .stream(CountingStream(total: 70_000), length: nil))
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("Transfer-Encoding") == nil)
            #expect(response.header("Connection") == "close")
            #expect(response.body.count == 70_000)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func connectionCloseIsHonoured(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send(
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().header("Connection") == "close")
            #expect(try client.isClosedByPeer())
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func unreadSmallBodyIsDrainedAndTheConnectionReused(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            let body = String(repeating: "z", count: 50_000)
            try client.send(
                "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n\(body)GET /q HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().text == "/p")
            #expect(try client.readResponse().text == "/q")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func unreadLargeBodyClosesTheConnection(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\nabc")
            let response = try client.readResponse()
            #expect(response.header("Connection") == "close")
            #expect(try client.isClosedByPeer())
        }
    }

    static let malformed: [(String, Int)] = [
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: a\u{0}b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", 400),
        ("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET nope HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
        ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: x\r\nBig: " + String(repeating: "b", count: 33 * 1024) + "\r\n\r\n", 431),
        ("GET / HTTP/1.1\r\nHost: x\r\n" + (0..<101).map { "F\($0): v\r\n" }.joined() + "\r\n", 431),
    ]

    @Test(arguments: EventLoopDriver.available, 0..<malformed.count)
    func malformedRequestGetsStatusAndClose(driver: EventLoopDriver, index: Int) async throws {
        let (text, expected) = Self.malformed[index]
        try await blocking {
            let server = try TestServer(driver: driver, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send(text)
            let response = try client.readResponse()
            #expect(response.status == expected, "\(text.prefix(60).debugDescription)")
            #expect(response.header("Connection") == "close")
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.text.hasPrefix("{\"error\":{\"code\":\(expected),\"message\":\""))
            #expect(try client.isClosedByPeer())
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func malformedChunkInBodyFailsTheStreamAndCloses(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: echoHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
            let response = try client.readResponse()
            #expect(response.status == 400)
            #expect(response.header("Connection") == "close")
            #expect(try client.isClosedByPeer())
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func bodyLimitIs413(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, configure: { $0.limits.maxBodyBytes = 10 }, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n")
            #expect(try client.readResponse().status == 413)
            #expect(try client.isClosedByPeer())
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func slowlorisGets408AndClose(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(
                driver: driver, configure: { $0.timeouts.headerRead = .milliseconds(300) }, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            let start = MonotonicClock.nanoseconds()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n")
            usleep(100_000)
            try client.send("X-Slow: 1\r\n")
            let response = try client.readResponse()
            let elapsed = Double(MonotonicClock.nanoseconds() - start) / 1e9
            #expect(response.status == 408)
            #expect(response.header("Connection") == "close")
            #expect(elapsed >= 0.29 && elapsed < 5)
            #expect(try client.isClosedByPeer())
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func silentNewConnectionIsClosedAfterTheHeaderTimeout(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(
                driver: driver, configure: { $0.timeouts.headerRead = .milliseconds(200) }, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            #expect(try client.readToEnd().isEmpty)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func idleKeepAliveConnectionIsClosedSilently(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(
                driver: driver, configure: { $0.timeouts.idle = .milliseconds(200) }, handler: okHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(try client.readToEnd().isEmpty)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func bodyReadTimeoutFailsThePull(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(
                driver: driver, configure: { $0.timeouts.bodyRead = .milliseconds(200) }, handler: echoHandler)
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            let response = try client.readResponse()
            #expect(response.status == 400)
            #expect(response.text.contains("timed out"))
            #expect(response.header("Connection") == "close")
            #expect(try client.isClosedByPeer())
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func slowReaderOf8MiBStreamKeepsServerBuffersBounded(driver: EventLoopDriver) async throws {
        let stream = CountingStream(total: 8 << 20)
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(status: 200, body: .stream(stream, length: 8 << 20))
            }
            defer { server.server.stop() }
            let client = try server.client(receiveBuffer: 64 * 1024)
            try client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            // Not reading: the producer must stall once the socket buffers are full.
            usleep(300_000)
            let producedWhileStalled = stream.produced.load(ordering: .relaxed)
            #expect(producedWhileStalled < 8 << 20)
            let response = try client.readResponse()
            #expect(response.body.count == 8 << 20)
            #expect(server.server.peakBufferedResponseBytesPerConnection <= 512 * 1024)
            #expect(server.server.peakBufferedResponseBytesPerConnection > 0)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func sendfileServesAFileRegion(driver: EventLoopDriver) async throws {
        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try await withTemporaryFile(content) { path in
            try await blocking {
                let server = try TestServer(driver: driver) { _ in
                    let descriptor = open(path, O_RDONLY)
                    return HTTPResponse(
                        status: 206, body: .file(FileRegion(descriptor: descriptor, offset: 1000, length: 250_000)))
                }
                defer { server.server.stop() }
                let client = try server.client()
                for _ in 0..<2 {
                    try client.send("GET /f HTTP/1.1\r\nHost: x\r\n\r\n")
                    let response = try client.readResponse()
                    #expect(response.status == 206)
                    #expect(response.header("Content-Length") == "250000")
                    #expect(response.body == Array(content[1000..<251_000]))
                }
            }
        }
    }

    /// Regions up to `inlineFileBytes` are read behind the head and sent with it; the bytes must be the
    /// region's, on every request of a keep-alive connection, and an empty region is an empty body.
    @Test(arguments: EventLoopDriver.available, [(100, 5000), (0, 16 * 1024), (7, 0)])
    func smallFileRegionIsSentWithTheHead(driver: EventLoopDriver, region: (offset: Int, length: Int)) async throws {
        let (offset, length) = region
        let content = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try await withTemporaryFile(content) { path in
            try await blocking {
                let server = try TestServer(driver: driver) { _ in
                    let descriptor = open(path, O_RDONLY)
                    return HTTPResponse(
                        status: 200,
                        body: .file(
                            FileRegion(
                                descriptor: descriptor, offset: Int64(offset),
                                length: Int64(length))))
                }
                defer { server.server.stop() }
                let client = try server.client()
                for _ in 0..<3 {
                    try client.send("GET /f HTTP/1.1\r\nHost: x\r\n\r\n")
                    let response = try client.readResponse()
                    #expect(response.status == 200)
                    #expect(response.header("Content-Length") == "\(length)")
                    #expect(response.body == Array(content[offset..<offset + length]))
                }
            }
        }
    }

    /// A file shorter than its region must never end the response cleanly (inline read or `sendfile`).
    @Test(arguments: EventLoopDriver.available, [4000, 400_000])
    func fileShorterThanItsRegionAbortsTheResponse(driver: EventLoopDriver, length: Int) async throws {
        try await withTemporaryFile([UInt8](repeating: 0x61, count: 1000)) { path in
            try await blocking {
                let server = try TestServer(driver: driver) { _ in
                    HTTPResponse(
                        status: 200,
                        body: .file(
                            FileRegion(
                                descriptor: open(path, O_RDONLY), offset: 0,
                                length: Int64(length))))
                }
                defer { server.server.stop() }
                let client = try server.client()
                try client.send("GET /f HTTP/1.1\r\nHost: x\r\n\r\n")
                // The server resets the connection: what arrived before the reset may be cut anywhere.
                let raw = try client.readToEnd()
                let headEnd =
                    (0..<max(0, raw.count - 3)).first { raw[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }
                    .map { $0 + 4 } ?? 0
                #expect(raw.count - headEnd < length)
            }
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func clientDisconnectMidResponseReportsIncomplete(driver: EventLoopDriver) async throws {
        let summary = Box<ExchangeSummary>()
        let stream = CountingStream(total: nil)
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(status: 200, body: .stream(stream, length: nil), onComplete: { summary.set($0) })
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET /endless HTTP/1.1\r\nHost: x\r\n\r\n")
            try client.fill()
            client.reset()
            let reported = try #require(summary.wait())
            #expect(reported.completed == false)
            #expect(reported.status == 200)
            #expect(reported.bytesOut > 0)
            let wasCancelled = stream.cancelled.load(ordering: .relaxed)
            #expect(wasCancelled)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func completedExchangeIsReportedOnce(driver: EventLoopDriver) async throws {
        let calls = Atomic<Int>(0)
        let summary = Box<ExchangeSummary>()
        try await blocking {
            let server = try TestServer(driver: driver) { request in
                _ = try? await request.body.collect(limit: 100)
                return HTTPResponse(
                    status: 201, body: .bytes(Array("done".utf8)),
                    onComplete: {
                        calls.add(1, ordering: .relaxed)
                        summary.set($0)
                    })
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody")
            #expect(try client.readResponse().status == 201)
            let reported = try #require(summary.wait())
            #expect(reported.completed)
            #expect(reported.status == 201)
            #expect(reported.bytesIn == Int64("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody".utf8.count))
            #expect(reported.bytesOut > 4)
            #expect(reported.timeToFirstByteNanos != nil)
            client.reset()
            usleep(50_000)
            let callCount = calls.load(ordering: .relaxed)
            #expect(callCount == 1)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func responseStreamFailureAbortsTheConnection(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(
                    status: 200, body: .stream(CountingStream(total: nil, chunk: 1000, failAfter: 5000), length: nil))
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let raw = String(decoding: try client.readToEnd(), as: UTF8.self)
            #expect(raw.contains("Transfer-Encoding: chunked"))
            #expect(!raw.hasSuffix("0\r\n\r\n"))
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func unsafeResponseHeadersAreDropped(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { _ in
                HTTPResponse(
                    status: 200, headers: ["X-Ok": "1", "X-Bad": "a\r\nInjected: yes", "Content-Length": "999"])
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.header("X-Ok") == "1")
            #expect(response.header("Injected") == nil)
            #expect(response.header("Content-Length") == "0")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func drainLetsInFlightRequestFinishAndRefusesNewConnections(driver: EventLoopDriver) async throws {
        let entered = Box<Bool>()
        let server = try TestServer(driver: driver) { request in
            entered.set(true)
            try? await Task.sleep(for: .milliseconds(300))
            return await okHandler(request)
        }
        let idle = try server.client()
        let busy = try server.client()
        try busy.send("GET /inflight HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try await blocking { entered.wait() }
        let drained = Box<Bool>()
        let drainTask = Task {
            await server.server.drain(deadline: .seconds(3))
            drained.set(true)
        }
        let response = try await blocking { try busy.readResponse() }
        #expect(response.status == 200)
        #expect(response.text == "/inflight")
        #expect(response.header("Connection") == "close")
        #expect(try await blocking { try busy.isClosedByPeer() })
        busy.reset()
        #expect(try await blocking { try idle.isClosedByPeer() })
        #expect(throws: TestFailure.self) { _ = try RawClient(port: server.port) }
        await drainTask.value
        #expect(drained.current == true)
        #expect(server.server.openConnections == 0)
    }

    @Test(arguments: EventLoopDriver.available)
    func drainDeadlineForceClosesStuckExchanges(driver: EventLoopDriver) async throws {
        let summary = Box<ExchangeSummary>()
        let entered = Box<Bool>()
        let server = try TestServer(driver: driver) { _ in
            entered.set(true)
            return HTTPResponse(
                status: 200, body: .stream(CountingStream(total: nil), length: nil), onComplete: { summary.set($0) })
        }
        let client = try server.client(receiveBuffer: 16 * 1024)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try await blocking { entered.wait() }
        let start = MonotonicClock.nanoseconds()
        await server.server.drain(deadline: .milliseconds(300))
        let elapsed = Double(MonotonicClock.nanoseconds() - start) / 1e9
        #expect(elapsed >= 0.29 && elapsed < 5)
        #expect(server.server.openConnections == 0)
        #expect(try await blocking { summary.wait() }?.completed == false)
    }

    @Test(arguments: EventLoopDriver.available)
    func stalledReaderIsAbortedAfterTheWriteTimeout(driver: EventLoopDriver) async throws {
        let summary = Box<ExchangeSummary>()
        let stream = CountingStream(total: nil)
        try await blocking {
            let server = try TestServer(driver: driver, configure: { $0.timeouts.write = .milliseconds(300) }) { _ in
                HTTPResponse(status: 200, body: .stream(stream, length: nil), onComplete: { summary.set($0) })
            }
            defer { server.server.stop() }
            let client = try server.client(receiveBuffer: 16 * 1024)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let start = MonotonicClock.nanoseconds()
            let reported = try #require(summary.wait(timeout: 3))
            let elapsed = Double(MonotonicClock.nanoseconds() - start) / 1e9
            #expect(reported.completed == false)
            #expect(elapsed >= 0.29 && elapsed < 5)
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func maxConnectionsDefersFurtherAccepts(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, configure: { $0.maxConnections = 1 }, handler: okHandler)
            defer { server.server.stop() }
            let first = try server.client()
            try first.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try first.readResponse().text == "/1")
            // The second connection completes in the kernel backlog but is not served while the first is open.
            let second = try RawClient(port: server.port, timeout: 0.3)
            try second.send("GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(throws: TestFailure.self) { _ = try second.readResponse() }
            first.reset()
            // Once the first is gone the waiting connection is accepted and answered.
            var answer: RawResponse?
            for _ in 0..<10 where answer == nil { answer = try? second.readResponse() }
            #expect(answer?.text == "/2")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func ipv6LoopbackLiteral(driver: EventLoopDriver) async throws {
        var configuration = HTTPServerConfiguration(host: "[::1]", port: 0, eventLoop: driver)
        configuration.maxConnections = 10
        let server = HTTPServer(
            configuration: configuration, responder: ClosureResponder(handler: okHandler), logger: .disabled)
        do {
            let port = try server.start()
            #expect(port > 0)
            server.stop()
        } catch {
            // Only acceptable failure: no IPv6 loopback on this machine.
            let unavailable: Set<HTTPServerError> = [
                .socket("bind [::1]:0", EADDRNOTAVAIL), .socket("socket", EAFNOSUPPORT),
            ]
            #expect(unavailable.contains(error), "\(error)")
        }
    }

    @Test(arguments: EventLoopDriver.available)
    func startRejectsBadAddresses(driver: EventLoopDriver) {
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "999.1.1.1", port: 0, eventLoop: driver),
            responder: ClosureResponder(handler: okHandler), logger: .disabled)
        #expect(throws: HTTPServerError.self) { _ = try server.start() }
    }
}

extension HTTPConnectionTests {
    /// Connections a client abandons in any phase all release their descriptors (the server's count of open
    /// connections returns to zero), on every driver. Each shape first waits until the server has accepted its
    /// connections (a connection counts as open from its registration, before `acceptedConnections` moves):
    /// on a loaded machine the acceptor may not have run yet when the clients are done, and none open would then
    /// prove nothing.
    @Test(arguments: EventLoopDriver.available)
    func abandonedConnectionsAreAllReleased(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver, handler: okHandler)
            defer { server.server.stop() }
            let acceptedBefore = server.server.acceptedConnections
            for shape in 0..<4 {
                for _ in 0..<20 {
                    let client = try server.client()
                    switch shape {
                    case 0: break
                    case 1: try client.send("GET / HTTP/1.1\r\nHo")
                    case 2:
                        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                        shutdown(client.fd, Int32(SHUT_WR))
                        _ = try client.readToEnd()
                    default: try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    }
                    client.reset()
                }
                let end = MonotonicClock.nanoseconds() + 5_000_000_000
                let made = acceptedBefore + 20 * (shape + 1)
                while server.server.acceptedConnections < made && MonotonicClock.nanoseconds() < end { usleep(2000) }
                #expect(server.server.acceptedConnections == made, "\(driver) shape \(shape)")
                while server.server.openConnections > 0 && MonotonicClock.nanoseconds() < end { usleep(2000) }
                #expect(server.server.openConnections == 0, "\(driver) shape \(shape)")
            }
        }
    }
}

extension HTTPConnectionTests {
    /// The request carries its loop's in-place permit, which applies in the responder's synchronous stretch, on
    /// a thread (or queue) marked as an event loop's. Work handed to another task still holds the permit but,
    /// running on the cooperative pool, may not use it, and is not on an event loop.
    @Test(arguments: EventLoopDriver.available)
    func responderStartsWithTheLoopsPermit(driver: EventLoopDriver) async throws {
        try await blocking {
            let server = try TestServer(driver: driver) { request in
                let permit = request.loop?.inPlacePermit
                let inPlace = InPlaceLookup.applies(permit) && EventLoopThreads.isCurrent
                let child = await Task {
                    (permit != nil, InPlaceLookup.applies(permit) || EventLoopThreads.isCurrent)
                }.value
                return HTTPResponse(status: 200, body: .bytes(Array("\(inPlace) \(child.0) \(child.1)".utf8)))
            }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let text = try client.readResponse().text
            #expect(text == "true true false")
        }
    }
}
