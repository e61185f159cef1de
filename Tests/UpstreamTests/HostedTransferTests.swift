import HTTPServer
import PortcullisCore
import Synchronization
import Testing

@testable import Upstream

/// Transfers started from an HTTP epoll loop run on that loop (the client's multi handle there is the loop's
/// guest), and everything a proxy does with them — head, streamed body, a dropped client — works there.
@Suite struct HostedTransferTests {
    /// What the server's handler saw about where it ran.
    final class Seen: Sendable {
        let hostBefore = Mutex<ObjectIdentifier?>(nil)
        let sameHostAfter = Mutex(false)
    }

    /// A server on the epoll driver whose handler proxies `GET /p?n=N` to the upstream's `/bytes?n=N`, streaming
    /// the upstream body back as its own.
    private func proxy(to upstream: TestServer, client: UpstreamClient, seen: Seen) throws -> (HTTPServer, Int) {
        let responder = ProxyResponder(upstream: upstream.base, client: client, seen: seen)
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(port: 0, eventLoop: .epoll), responder: responder, logger: .disabled)
        return (server, try server.start())
    }

    @Test func aTransferStartedOnAnEpollLoopRunsThereAndStreamsItsBody() async throws {
        let upstream = try await TestServer.start()
        let client = UpstreamClient()
        let seen = Seen()
        let (server, port) = try proxy(to: upstream, client: client, seen: seen)
        defer { server.stop() }
        // The test's own client (on no loop: its own thread) reads through the proxy.
        let reader = UpstreamClient()
        for size in [10, 3 << 20] {
            let result = try await reader.fetch(
                UpstreamRequest(url: "http://127.0.0.1:\(port)/p?n=\(size)"), maxBytes: 4 << 20)
            #expect(result.status == 200)
            #expect(result.body == expectedPattern(size))
        }
        #expect(seen.hostBefore.withLock { $0 } != nil)
        #expect(seen.sameHostAfter.withLock { $0 })
        #expect(client.hostedMultiCount >= 1)
        #expect(reader.hostedMultiCount == 0)
        try await waitUntil { client.activeTransfers == 0 }
    }

    /// A dropped client's multi handles leave their hosts once idle: the host lets go of them.
    @Test func aDroppedClientsHostedMultiHandleIsReleased() async throws {
        final class Watch: @unchecked Sendable { var multis: [Weak] = [] }
        final class Weak: @unchecked Sendable { weak var multi: CurlMulti? }
        let upstream = try await TestServer.start()
        let watch = Watch()
        let reader = UpstreamClient()
        do {
            let client = UpstreamClient()
            let (server, port) = try proxy(to: upstream, client: client, seen: Seen())
            defer { server.stop() }
            let result = try await reader.fetch(UpstreamRequest(url: "http://127.0.0.1:\(port)/p?n=100"), maxBytes: 200)
            #expect(result.status == 200)
            watch.multis = client.hostedMultis.map {
                let weak = Weak()
                weak.multi = $0
                return weak
            }
            #expect(!watch.multis.isEmpty)
        }
        try await waitUntil { watch.multis.allSatisfy { $0.multi == nil } }
    }
}

private struct ProxyResponder: HTTPResponder {
    let upstream: String
    let client: UpstreamClient
    let seen: HostedTransferTests.Seen

    func respond(to request: HTTPRequest) async -> HTTPResponse {
        let n = request.target.split(separator: "=").last.map(String.init) ?? "0"
        let before = SocketHosts.current.map { ObjectIdentifier($0) }
        seen.hostBefore.withLock { $0 = before }
        do {
            let response = try await client.send(UpstreamRequest(url: "\(upstream)/bytes?n=\(n)"))
            let after = SocketHosts.current.map { ObjectIdentifier($0) }
            seen.sameHostAfter.withLock { $0 = before != nil && after == before }
            return HTTPResponse(
                status: response.status, body: .stream(response.body, length: response.body.expectedLength))
        } catch {
            return HTTPResponse(status: 502)
        }
    }
}
