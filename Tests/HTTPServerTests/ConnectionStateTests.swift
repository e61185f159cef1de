import PortcullisCore
import Testing

@testable import HTTPServer

/// `ConnectionState` as a pure value: which deadline a state has, what happens when it passes, what the
/// socket must report, and which transitions exist. The clock is a plain number.
@Suite struct ConnectionStateTests {
    static let head: HTTPRequestHead = {
        var parser = HTTPRequestParser()
        let text = Array("PUT /u HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n".utf8)
        guard case .head(let head)? = text.withUnsafeBytes({ parser.parse($0).event }) else { fatalError("no head") }
        return head
    }()

    static func exchange() -> Exchange {
        Exchange(
            head: head, receivedAt: 0, loop: ExchangeLoop(EmbeddedEventLoop()), parser: ParserBox(HTTPRequestParser()),
            reuse: .keepAlive)
    }

    /// Silence before the first head or between requests closes silently; a partial head gets 408.
    @Test(arguments: [(HeadReading.Wait.firstHead, Expiry.close), (.idle, .close), (.partialHead, .requestTimeout)])
    func headDeadline(wait: HeadReading.Wait, expected: Expiry) {
        let state = ConnectionState.readingHead(HeadReading(wait: wait, deadline: 100))
        #expect(state.nextDeadline == 100)
        #expect(state.expiry(now: 99) == nil)
        #expect(state.expiry(now: 100) == expected)
        #expect(state.interest(endOfInput: false) == .read)
        #expect(state.interest(endOfInput: true) == [])
    }

    @Test func bodyPullDeadline() {
        let exchange = Self.exchange()
        let state = ConnectionState.exchanging(exchange)
        #expect(state.nextDeadline == .max, "no pull, nothing stalled: no deadline")
        #expect(state.interest(endOfInput: false) == [], "no pull: the socket is not read (backpressure)")
        exchange.startPull(Exchange.PendingPull(maxLength: 10) { _ in }, deadline: 200)
        #expect(state.nextDeadline == 200)
        #expect(state.interest(endOfInput: false) == .read)
        #expect(state.expiry(now: 199) == nil)
        #expect(state.expiry(now: 200) == .bodyTimeout)
    }

    /// The write stall wins over a body pull (it aborts, which ends the pull too).
    @Test func writeStallDeadline() {
        let exchange = Self.exchange()
        exchange.output.bytes = [1, 2, 3]
        exchange.output.stallDeadline = 300
        exchange.startPull(Exchange.PendingPull(maxLength: 10) { _ in }, deadline: 400)
        let state = ConnectionState.exchanging(exchange)
        #expect(state.nextDeadline == 300)
        #expect(state.interest(endOfInput: false) == [.read, .write])
        #expect(state.expiry(now: 299) == nil)
        #expect(state.expiry(now: 300) == .writeStall)
        #expect(state.expiry(now: 400) == .writeStall)

        let closing = ConnectionState.closingAfterWrite(ErrorResponse(output: exchange.output))
        #expect(closing.expiry(now: 300) == .writeStall)
        #expect(closing.interest(endOfInput: false) == .write)
    }

    @Test func drainAndLingerDeadlines() {
        let drain = ConnectionState.drainingBody(BodyDrain(parser: ParserBox(HTTPRequestParser()), deadline: 500))
        #expect(drain.expiry(now: 499) == nil)
        #expect(drain.expiry(now: 500) == .close)
        let linger = ConnectionState.lingering(Linger(deadline: 600))
        #expect(linger.expiry(now: 599) == nil)
        #expect(linger.expiry(now: 600) == .close)
        #expect(linger.interest(endOfInput: false) == .read)
        #expect(ConnectionState.closed.nextDeadline == .max)
        #expect(ConnectionState.closed.expiry(now: .max) == nil)
    }

    /// The diagram's edges, and nothing else.
    @Test func transitions() {
        typealias K = ConnectionState.Kind
        let all: [K] = [.readingHead, .exchanging, .drainingBody, .closingAfterWrite, .lingering, .closed]
        let edges: Set<String> = [
            "readingHead→exchanging", "readingHead→closingAfterWrite", "readingHead→closed",
            "exchanging→readingHead", "exchanging→drainingBody", "exchanging→lingering", "exchanging→closed",
            "drainingBody→readingHead", "drainingBody→lingering", "drainingBody→closed",
            "closingAfterWrite→lingering", "closingAfterWrite→closed",
            "lingering→closed",
        ]
        for from in all {
            for to in all where from != to {
                #expect(ConnectionState.allows(from: from, to: to) == edges.contains("\(from)→\(to)"), "\(from)→\(to)")
            }
        }
    }

    /// The exchange's body region: a late cancel or failure of a settled body changes nothing; moving a
    /// waiting pull hands it back exactly once.
    @Test func bodyRegionTransitions() {
        let exchange = Self.exchange()
        guard case .unread(let parser, invited: true) = exchange.body else { Issue.record("\(exchange.body)"); return }
        #expect(exchange.endPull(.cancelled(parser)).map(\.maxLength) == nil, "no pull was waiting")
        guard case .cancelled = exchange.body else { Issue.record("\(exchange.body)"); return }
        #expect(exchange.endPull(.failed(ByteStreamError.timedOut)).map(\.maxLength) == nil)
        guard case .cancelled = exchange.body else { Issue.record("\(exchange.body)"); return }

        let pulling = Self.exchange()
        pulling.startPull(Exchange.PendingPull(maxLength: 1) { _ in }, deadline: 1)
        #expect(pulling.endPull(.complete).map(\.maxLength) == 1)
        #expect(pulling.endPull(.complete).map(\.maxLength) == nil)
    }

    /// An illegal transition stops the process rather than leaving a connection in a state it cannot be in.
    @Test func illegalTransitionIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let exchange = ConnectionStateTests.exchange()
            exchange.startPull(Exchange.PendingPull(maxLength: 1) { _ in }, deadline: 1)
            exchange.startPull(Exchange.PendingPull(maxLength: 1) { _ in }, deadline: 1)
        }
        await #expect(processExitsWith: .failure) {
            let exchange = ConnectionStateTests.exchange()
            exchange.startSending(.buffered)
            exchange.startSending(.buffered)
        }
        await #expect(processExitsWith: .failure) {
            let embedded = EmbeddedConnection(responder: ClosureResponder { _ in HTTPResponse(status: 200) })
            embedded.connection.abort()
            embedded.connection.transition(to: .readingHead(HeadReading(wait: .idle, deadline: 0)))
        }
    }
}
