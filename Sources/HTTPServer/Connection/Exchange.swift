import PortcullisCore

/// One request/response pair: the payload of `ConnectionState.exchanging`.
///
/// Its state has two regions that advance independently — the request body (read while the responder
/// pulls) and the response (produced by the responder, then written) — one enum each:
///
/// | `body` | owns | next |
/// |---|---|---|
/// | `complete` | nothing (no body, or all of it read) | — |
/// | `unread(parser, invited:)` | the parser inside the body | a pull → `pulling`; cancel → `cancelled`; error → `failed` |
/// | `pulling(parser, pull, deadline)` | the parser, the waiting pull, the body-read deadline | bytes → `unread`; end → `complete`; broken/timeout → `failed`; cancel → `cancelled` |
/// | `cancelled(parser)` | the parser (the rest is drained after the response) | — |
/// | `failed(error)` | the error every later pull gets | — |
///
/// | `response` | owns | next |
/// |---|---|---|
/// | `awaitingResponder(task)` | the responder's task (cancelled when the connection goes away) | its answer → `sending`, or `finished` if the connection went away meanwhile |
/// | `sending(producer)` | what produces the body: nothing left, a file region, a stream | last byte in the kernel, or abandoned → `finished` |
/// | `finished` | nothing: the summary was reported (exactly once) | — |
///
/// `invited` is false only while an `Expect: 100-continue` request has not been sent its `100 Continue`:
/// answered then, the client may never send the body, so the connection closes after the response.
///
/// Confined to the connection's loop (hence `@unchecked Sendable`: the responder task and the body stream
/// only carry it back to that loop).
final class Exchange: @unchecked Sendable {
    enum Body {
        case complete
        case unread(ParserBox, invited: Bool)
        case pulling(ParserBox, PendingPull, deadline: UInt64)
        case cancelled(ParserBox)
        case failed(any Error)
    }

    enum Response {
        case awaitingResponder(Task<Void, Never>?)
        case sending(Producer)
        case finished
    }

    /// What still produces response body bytes once the head is in `output`.
    enum Producer {
        /// Nothing: everything is in `output` (bytes, empty, HEAD, a small file region, an ended stream).
        case buffered
        case file(FileRegion, offset: Int64, remaining: Int64)
        /// `remaining` counts down a declared length; nil for chunked or close-delimited. `pulling`: a
        /// `next` is outstanding.
        case stream(any ByteStream, remaining: Int64?, chunked: Bool, pulling: Bool)
    }

    /// Whether the connection serves another request after this one.
    enum Reuse { case keepAlive, close }

    /// The responder's waiting `next` or `nextPieces`: resumed exactly once, on the loop, with one piece
    /// unless it `gathers`.
    struct PendingPull {
        let maxLength: Int
        /// Several pieces wanted (`nextPieces`): the loop goes on reading while the socket has bytes.
        var gathers = false
        let resume: (Result<[[UInt8]]?, any Error>) -> Void
    }

    let head: HTTPRequestHead
    let receivedAt: UInt64
    let loop: ExchangeLoop
    private(set) var body: Body
    private(set) var response: Response = .awaitingResponder(nil)
    var reuse: Reuse
    /// Response bytes not yet in the kernel, and since when the socket refuses them.
    var output = SendBuffer()
    /// The response's bytes were held for the end of a loop batch once (`HTTPConnection.held`); from then on
    /// they are sent as soon as they are ready.
    var wasHeld = false

    // The summary, reported once when the exchange ends either way.
    var status = 0
    var onComplete: (@Sendable (ExchangeSummary) -> Void)?
    var bytesIn: Int64
    var bytesOut: Int64 = 0
    var firstByteAt: UInt64?
    var bodyBytesReceived: Int64 = 0

    /// `parser` is the connection's, positioned right after the head; kept only when a body follows.
    init(head: HTTPRequestHead, receivedAt: UInt64, loop: ExchangeLoop, parser: ParserBox?, reuse: Reuse) {
        self.head = head
        self.loop = loop
        self.receivedAt = receivedAt
        self.reuse = reuse
        if head.framing != .none, let parser {
            body = .unread(parser, invited: !head.expectsContinue)
        } else {
            body = .complete
        }
        bytesIn = Int64(head.headBytes)
    }

    var isHead: Bool { head.method == .head }

    var responseStarted: Bool {
        if case .awaitingResponder = response { return false }
        return true
    }

    var bodyExpectedLength: Int64? {
        if case .length(let n) = head.framing { return n }
        return nil
    }

    /// The parser while body bytes remain to be read or drained.
    var bodyParser: ParserBox? {
        switch body {
        case .unread(let parser, _), .pulling(let parser, _, _), .cancelled(let parser): parser
        case .complete, .failed: nil
        }
    }

    // MARK: - Request body transitions

    /// A pull starts waiting for bytes (`unread` → `pulling`).
    func startPull(_ pull: PendingPull, deadline: UInt64) {
        guard case .unread(let parser, _) = body else { preconditionFailure("pull started in body state \(body)") }
        body = .pulling(parser, pull, deadline: deadline)
    }

    /// Bytes arrived but not a whole chunk: the waiting pull gets a fresh deadline.
    func extendPull(deadline: UInt64) {
        guard case .pulling(let parser, let pull, _) = body else { preconditionFailure("no pull to extend in \(body)") }
        body = .pulling(parser, pull, deadline: deadline)
    }

    /// The waiting pull is answered with `result`, and the body moves to `next`. Returns the pull to resume
    /// (the caller resumes it after the state is consistent, since resuming may run the responder).
    func endPull(_ next: Body) -> PendingPull? {
        switch (body, next) {
        case (.pulling(_, let pull, _), .unread), (.pulling(_, let pull, _), .complete),
            (.pulling(_, let pull, _), .failed), (.pulling(_, let pull, _), .cancelled):
            body = next
            return pull
        case (.unread, .failed), (.unread, .cancelled):
            body = next
            return nil
        case (.complete, _), (.failed, _), (.cancelled, _):
            return nil  // already settled: a late cancel or failure changes nothing
        default:
            preconditionFailure("request body cannot go from \(body) to \(next)")
        }
    }

    // MARK: - Response transitions

    /// The responder's task, once started (`awaitingResponder` keeps it for cancellation).
    func responderStarted(_ task: Task<Void, Never>) {
        guard case .awaitingResponder = response else { preconditionFailure("responder started twice") }
        response = .awaitingResponder(task)
    }

    /// The head is being written; `producer` makes the rest (`awaitingResponder` → `sending`).
    func startSending(_ producer: Producer) {
        guard case .awaitingResponder = response else { preconditionFailure("response started twice") }
        response = .sending(producer)
    }

    /// The producer advanced (a file region or a stream moved on).
    func advance(_ producer: Producer) {
        guard case .sending = response else { preconditionFailure("producer advanced in \(response)") }
        response = .sending(producer)
    }

    /// Ends the exchange: reports the summary exactly once (`completed: false` when the client did not get
    /// the whole response). Later calls do nothing.
    func finish(completed: Bool, now: UInt64) {
        if case .finished = response { return }
        response = .finished
        guard let onComplete else { return }
        self.onComplete = nil
        onComplete(
            ExchangeSummary(
                status: status, bytesIn: bytesIn, bytesOut: bytesOut, completed: completed,
                durationNanos: now &- receivedAt, timeToFirstByteNanos: firstByteAt.map { $0 &- receivedAt },
                loop: loop))
    }
}

/// Response bytes on their way to the socket.
struct SendBuffer {
    var bytes: [UInt8] = []
    var offset = 0
    /// When the socket has refused bytes: the time by which it must take some (the write timeout), else the
    /// connection is aborted. `.max` while nothing waits. Covers `sendfile` as well as `bytes`.
    var stallDeadline: UInt64 = .max

    var isEmpty: Bool { offset == bytes.count }
    var isStalled: Bool { stallDeadline != .max }
    var pendingCount: Int { bytes.count - offset }
}

/// The request body as the responder sees it: each `next` hops to the connection's loop, which parses
/// buffered bytes or reads the socket for more — the only time body bytes are read (backpressure).
final class RequestBodyStream: ByteStream {
    private let connection: HTTPConnection
    private let exchange: Exchange
    let expectedLength: Int64?

    init(connection: HTTPConnection, exchange: Exchange) {
        self.connection = connection
        self.exchange = exchange
        expectedLength = exchange.bodyExpectedLength
    }

    func next(maxLength: Int) async throws -> [UInt8]? {
        try await pull(maxLength: maxLength, gathers: false)?.first
    }

    /// One hop to the loop for as many bytes as the socket has ready (up to `maxLength`).
    func nextPieces(maxLength: Int) async throws -> [[UInt8]]? {
        try await pull(maxLength: maxLength, gathers: true)
    }

    private func pull(maxLength: Int, gathers: Bool) async throws -> [[UInt8]]? {
        let connection = self.connection, exchange = self.exchange
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                connection.loop.execute {
                    connection.pullBody(exchange, maxLength: max(1, maxLength), gathers: gathers) {
                        continuation.resume(with: $0)
                    }
                }
            }
        } onCancel: {
            connection.loop.execute { connection.cancelBody(exchange) }
        }
    }

    func cancel() {
        let connection = self.connection, exchange = self.exchange
        connection.loop.execute { connection.cancelBody(exchange) }
    }
}

/// The body of requests without one: stateless, shared, allocation-free.
final class EmptyByteStream: ByteStream {
    static let shared = EmptyByteStream()
    var expectedLength: Int64? { 0 }
    func next(maxLength: Int) async throws -> [UInt8]? { nil }
    func cancel() {}
}
