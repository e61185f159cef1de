import PortcullisCore

/// One request/response pair on a connection. Confined to the connection's loop thread (hence `@unchecked
/// Sendable`: the responder task and body stream only carry it back to that loop).
final class Exchange: @unchecked Sendable {
    enum BodyState {
        /// Body bytes remain on the wire.
        case open
        /// The parser reported the end of the body (or there was none).
        case ended
        /// The body cannot be read any more (parse error, timeout, client gone); the connection will close.
        case failed(any Error)
    }

    /// How the response body is being produced.
    enum Writer {
        /// Head not written yet.
        case pending
        /// Everything is in the output buffer (bytes, empty, HEAD, or an ended stream).
        case buffered
        case file(FileRegion, offset: Int64, remaining: Int64)
        /// `remaining` counts down a declared length; nil for chunked or close-delimited.
        case stream(any ByteStream, remaining: Int64?, chunked: Bool, pulling: Bool)
    }

    struct PendingPull {
        let maxLength: Int
        let continuation: CheckedContinuation<[UInt8]?, any Error>
    }

    let head: HTTPRequestHead
    let receivedAt: UInt64
    var body: BodyState
    var bodyCancelled = false
    var pendingPull: PendingPull?
    var continueSent = false
    var bodyBytesReceived: Int64 = 0

    var responderTask: Task<Void, Never>?
    var status = 0
    var onComplete: (@Sendable (ExchangeSummary) -> Void)?
    var writer: Writer = .pending
    var closeAfter = false
    var reported = false

    var bytesIn: Int64
    var bytesOut: Int64 = 0
    var firstByteAt: UInt64?

    init(head: HTTPRequestHead, receivedAt: UInt64) {
        self.head = head
        self.receivedAt = receivedAt
        self.body = head.framing == .none ? .ended : .open
        self.bytesIn = Int64(head.headBytes)
    }

    var isHead: Bool { head.method == .head }
    var responseStarted: Bool {
        if case .pending = writer { return false }
        return true
    }

    /// Reports the summary once; later calls do nothing.
    func report(completed: Bool) {
        guard !reported else { return }
        reported = true
        guard let onComplete else { return }
        let now = MonotonicClock.nanoseconds()
        onComplete(ExchangeSummary(
            status: status, bytesIn: bytesIn, bytesOut: bytesOut, completed: completed,
            durationNanos: now &- receivedAt, timeToFirstByteNanos: firstByteAt.map { $0 &- receivedAt }))
        self.onComplete = nil
    }
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
        if case .length(let n) = exchange.head.framing { expectedLength = n } else { expectedLength = nil }
    }

    func next(maxLength: Int) async throws -> [UInt8]? {
        let connection = self.connection, exchange = self.exchange
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                connection.loop.execute {
                    connection.pullBody(exchange, maxLength: max(1, maxLength), continuation: continuation)
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
