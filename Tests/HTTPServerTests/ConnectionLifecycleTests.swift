import PortcullisCore
import Synchronization
import Testing

@testable import HTTPServer

/// Every connection timeout, driven by an injected clock (`EmbeddedEventLoop`): one nanosecond before its
/// deadline nothing happens, at the deadline the connection acts. No test here sleeps.
@Suite struct ConnectionLifecycleTests {
    static let second: UInt64 = 1_000_000_000
    static let defaults = ConnectionTimeouts(HTTPServerTimeouts())

    /// A responder answering synchronously (on the loop, inside `respond`'s first stretch).
    static let ok = ClosureResponder { request in
        HTTPResponse(status: 200, body: .bytes(Array(request.target.utf8)))
    }

    /// A responder that never answers by itself (it waits to be cancelled).
    static let parked = ClosureResponder { _ in
        try? await Task.sleep(for: .seconds(3600))
        return HTTPResponse(status: 503)
    }

    @Test func silentNewConnectionClosesAtTheHeaderTimeout() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        let accepted = embedded.loop.now()
        guard case .readingHead(let reading) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        #expect(reading.wait == .firstHead)
        #expect(reading.deadline == accepted + Self.defaults.headerRead)
        #expect(embedded.loop.earliestDeadline == reading.deadline)

        embedded.loop.advance(to: reading.deadline - 1)
        #expect(embedded.kind == .readingHead)
        embedded.loop.advance(to: reading.deadline)
        #expect(embedded.kind == .closed)
        #expect(embedded.output().isEmpty, "closed silently")
        #expect(embedded.peerClosed())
    }

    /// The first head's deadline counts from the accept, not from its first byte (slowloris).
    @Test func partialFirstHeadGets408AtTheHeaderTimeout() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        let accepted = embedded.loop.now()
        embedded.loop.advance(by: 4 * Self.second)
        embedded.send("GET / HTTP/1.1\r\nHost: x\r\n")
        guard case .readingHead(let reading) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        #expect(reading.wait == .partialHead)
        #expect(reading.deadline == accepted + Self.defaults.headerRead)

        embedded.loop.advance(to: reading.deadline - 1)
        #expect(embedded.kind == .readingHead)
        embedded.loop.advance(to: reading.deadline)
        let response = embedded.output()
        #expect(response.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(response.contains("Connection: close\r\n"))
        #expect(embedded.kind == .lingering)
    }

    /// Between requests the idle timeout applies, silently; a head that begins restarts the header timeout.
    @Test func idleKeepAliveConnectionClosesAtTheIdleTimeout() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(embedded.output().hasSuffix("\r\n\r\n/a"))
        let answered = embedded.loop.now()
        guard case .readingHead(let idle) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        #expect(idle.wait == .idle)
        #expect(idle.deadline == answered + Self.defaults.idle)
        #expect(idle.parser == nil, "an idle connection holds no parser")

        embedded.loop.advance(to: idle.deadline - 1)
        #expect(embedded.kind == .readingHead)
        embedded.loop.advance(to: idle.deadline)
        #expect(embedded.kind == .closed)
        #expect(embedded.output().isEmpty)
    }

    @Test func headBeginningWhileIdleRestartsTheHeaderTimeout() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = embedded.output()
        embedded.loop.advance(by: 30 * Self.second)
        embedded.send("GET /b HTTP/1.1\r\n")
        let begun = embedded.loop.now()
        guard case .readingHead(let reading) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        #expect(reading.wait == .partialHead)
        #expect(reading.deadline == begun + Self.defaults.headerRead)
        embedded.loop.advance(to: reading.deadline)
        #expect(embedded.output().hasPrefix("HTTP/1.1 408 "))
    }

    /// A body pull that gets no byte for the body timeout fails with `timedOut`; the connection then closes
    /// after the response.
    @Test func bodyPullTimesOut() throws {
        let embedded = EmbeddedConnection(responder: Self.parked)
        embedded.send("PUT /u HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        guard case .exchanging(let exchange) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        let results = PullResults()
        // The responder's `next` calls, as they arrive on the loop.
        embedded.connection.pullBody(exchange, maxLength: 100) { results.append($0) }
        #expect(results.texts == ["abc"])
        let pulled = embedded.loop.now()
        embedded.connection.pullBody(exchange, maxLength: 100) { results.append($0) }
        embedded.connection.pullBody(exchange, maxLength: 100) { results.append($0) }
        #expect(results.texts == ["abc", "cancelled"], "a concurrent second pull is refused; the first waits")
        guard case .pulling(_, _, let deadline) = exchange.body else { Issue.record("\(exchange.body)"); return }
        #expect(deadline == pulled + Self.defaults.bodyRead)
        #expect(embedded.connection.registration.applied.contains(.read))

        embedded.loop.advance(to: deadline - 1)
        #expect(results.texts.count == 2)
        embedded.loop.advance(to: deadline)
        #expect(results.texts.last == "timedOut")
        #expect(exchange.reuse == .close)
        guard case .failed = exchange.body else { Issue.record("\(exchange.body)"); return }
    }

    /// A socket that takes none of the response for the write timeout is aborted, and the exchange is
    /// reported incomplete.
    @Test func stalledWriteIsAbortedAtTheWriteTimeout() {
        let summary = Mutex<ExchangeSummary?>(nil)
        let big = ClosureResponder { _ in
            HTTPResponse(
                status: 200, body: .bytes([UInt8](repeating: 0x61, count: 8 << 20)),
                onComplete: { value in summary.withLock { $0 = value } })
        }
        let embedded = EmbeddedConnection(responder: big)
        embedded.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        guard case .exchanging(let exchange) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        let stalled = exchange.output.stallDeadline
        #expect(stalled == embedded.loop.now() + Self.defaults.write)
        #expect(embedded.connection.registration.applied == .write)

        embedded.loop.advance(to: stalled - 1)
        #expect(embedded.kind == .exchanging)
        embedded.loop.advance(to: stalled)
        #expect(embedded.kind == .closed)
        #expect(summary.withLock { $0 }?.completed == false)
    }

    /// Progress restarts the write timeout.
    @Test func writeProgressRestartsTheWriteTimeout() {
        let big = ClosureResponder { _ in
            HTTPResponse(status: 200, body: .bytes([UInt8](repeating: 0x62, count: 8 << 20)))
        }
        let embedded = EmbeddedConnection(responder: big)
        embedded.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        guard case .exchanging(let exchange) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        embedded.loop.advance(by: 20 * Self.second)
        _ = embedded.output()  // the client reads: the socket takes more
        embedded.loop.run()
        #expect(exchange.output.stallDeadline == embedded.loop.now() + Self.defaults.write)
        embedded.loop.advance(by: 20 * Self.second)
        #expect(embedded.kind == .exchanging, "40 s after the first stall, but only 20 s without progress")
    }

    /// After an error response the connection lingers (reads and discards) for the linger time, then closes.
    @Test func lingeringEndsAtTheLingerTimeout() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.send("GET nope HTTP/1.1\r\n\r\n")
        #expect(embedded.output().hasPrefix("HTTP/1.1 400 "))
        guard case .lingering(let linger) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        #expect(linger.deadline == embedded.loop.now() + Self.defaults.linger)
        embedded.send("more bytes the server discards")
        guard case .lingering(let later) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        #expect(later.discarded == 30)
        embedded.loop.advance(to: linger.deadline - 1)
        #expect(embedded.kind == .lingering)
        embedded.loop.advance(to: linger.deadline)
        #expect(embedded.kind == .closed)
    }

    /// The rest of an unread body is drained after the response; a body that stops coming is given up at
    /// the body timeout.
    @Test func drainingAnUnreadBodyTimesOut() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        #expect(embedded.output().hasSuffix("/p"))
        guard case .drainingBody(let drain) = embedded.state else { Issue.record("\(embedded.kind)"); return }
        #expect(drain.drained == 10)
        #expect(drain.deadline == embedded.loop.now() + Self.defaults.bodyRead)
        embedded.loop.advance(to: drain.deadline - 1)
        #expect(embedded.kind == .drainingBody)
        embedded.loop.advance(to: drain.deadline)
        #expect(embedded.kind == .closed)
    }

    /// A drained body that completes returns the connection to reading heads, and it serves the next one.
    @Test func drainedBodyLeadsToTheNextRequest() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n12")
        #expect(embedded.kind == .drainingBody)
        embedded.send("345GET /q HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = embedded.output()
        #expect(text.contains("/p") && text.hasSuffix("/q"))
        #expect(embedded.kind == .readingHead)
    }

    /// The server's drain: an idle connection closes at once; a connection mid-head answers that request with
    /// `Connection: close` and then closes.
    @Test func drainClosesIdleConnectionsAndEndsBusyOnesAfterTheirRequest() {
        let idle = EmbeddedConnection(responder: Self.ok)
        idle.connection.beginDrain()
        idle.loop.run()
        #expect(idle.kind == .closed)

        let busy = EmbeddedConnection(responder: Self.ok)
        busy.send("GET /last HTTP/1.1\r\n")
        busy.connection.beginDrain()
        busy.send("Host: x\r\n\r\n")
        let text = busy.output()
        #expect(text.contains("Connection: close\r\n"))
        #expect(text.hasSuffix("/last"))
        #expect(busy.kind == .lingering)
    }

    /// A buffered response waits for the end of the loop's batch (the client is woken once for the batch's
    /// responses, not once per response); meanwhile the connection keeps its registration.
    @Test func bufferedResponseIsSentAtTheEndOfTheBatch() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        let interest = embedded.connection.registration.applied
        embedded.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        embedded.loop.runBatch()
        #expect(embedded.kind == .exchanging)
        #expect(embedded.loop.held.count == 1)
        #expect(embedded.connection.registration.applied == interest)
        #expect(embedded.output().isEmpty)

        embedded.loop.sendHeld()
        #expect(embedded.output().hasSuffix("/a"))
        #expect(embedded.kind == .readingHead)
        #expect(embedded.loop.held.count == 0)
    }

    /// Pipelined requests of one batch: each response is held in turn and all leave at the batch's end, in order.
    @Test func pipelinedResponsesOfOneBatchLeaveInOrderAtItsEnd() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.write(
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n")
        embedded.loop.runBatch()
        #expect(embedded.output().isEmpty)
        embedded.loop.sendHeld()
        let text = embedded.output()
        #expect(text.split(separator: "HTTP/1.1 200 OK\r\n").map { String($0.suffix(2)) } == ["/a", "/b", "/c"])
        #expect(embedded.kind == .readingHead)
    }

    /// A connection aborted while its response is held sends none of it.
    @Test func connectionAbortedWhileItsResponseIsHeldSendsNothing() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        embedded.loop.runBatch()
        embedded.connection.abort()
        embedded.loop.sendHeld()
        embedded.loop.run()
        #expect(embedded.kind == .closed)
        #expect(embedded.output().isEmpty)
        #expect(embedded.peerClosed())
    }

    /// A peer that half-closes while idle is closed without waiting for any timeout.
    @Test func peerClosingWhileIdleClosesAtOnce() {
        let embedded = EmbeddedConnection(responder: Self.ok)
        embedded.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        embedded.shutdownClient()
        #expect(embedded.kind == .closed)
        #expect(embedded.loop.now() == 1_000_000_000, "no time passed")
    }

    /// A responder still working when the connection closes is cancelled; its late answer is reported as
    /// incomplete exactly once.
    @Test func abandonedExchangeCancelsTheResponder() async throws {
        let embedded = EmbeddedConnection(responder: Self.parked)
        embedded.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        guard case .exchanging(let exchange) = embedded.state,
            case .awaitingResponder(let task?) = exchange.response
        else { Issue.record("\(embedded.kind)"); return }
        embedded.connection.abort()
        #expect(embedded.kind == .closed)
        #expect(task.isCancelled)
        let summary = Mutex<[ExchangeSummary]>([])
        exchange.onComplete = nil
        embedded.connection.responseReady(
            exchange,
            HTTPResponse(
                status: 503,
                onComplete: { value in
                    summary.withLock { $0.append(value) }
                }))
        embedded.connection.responseReady(exchange, HTTPResponse(status: 503))
        #expect(summary.withLock { $0.map(\.completed) } == [false])
    }
}

/// The results a body pull delivered, as short texts.
final class PullResults: @unchecked Sendable {
    private(set) var texts: [String] = []

    private static func name(_ error: ByteStreamError) -> String {
        switch error {
        case .cancelled: "cancelled"
        case .timedOut: "timedOut"
        case .truncated: "truncated"
        case .limitExceeded: "limitExceeded"
        }
    }
    func append(_ result: Result<[UInt8]?, any Error>) {
        switch result {
        case .success(let bytes?): texts.append(String(decoding: bytes, as: UTF8.self))
        case .success(nil): texts.append("end")
        case .failure(let error as ByteStreamError): texts.append(Self.name(error))
        case .failure(let error): texts.append("\(error)")
        }
    }
}
