import PortcullisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One accepted TCP connection: the I/O shell around `HTTPRequestParser` and the lifecycle of
/// `ConnectionState` (see there for the states, what each owns, and the legal transitions).
///
/// Threading: every field is confined to the connection's event loop (hence `@unchecked Sendable`); the loop
/// delivers socket readiness (`handleReadiness`), deadlines (`checkDeadlines`) and jobs from other threads
/// (`loop.execute`). Every such entry point ends in `settle()`, which parses what is buffered and then derives
/// the loop's interest and the next deadline from the state — so a pipelined burst is a loop, never a
/// recursion, and the registration changes at most once per event.
///
/// The loop→async bridge (`AsyncBridge`): once a head is complete, the responder starts as an immediate task
/// on the loop thread, holding the loop's `InPlaceLookup` permit; a response produced without suspending is
/// written at once, otherwise it is handed back with `loop.execute` when ready. Streamed response chunks are
/// pulled the same way, and each request body `next` hops onto the loop and is answered from there, so
/// neither side ever runs ahead of the other.
///
/// A response whose bytes are all in user space (a head and a small body: most responses) is not sent the
/// moment it is ready but at the end of the loop's batch (`EventLoop.sendAtEndOfBatch`), together with the
/// other responses the batch produced. Each `send` to an idle client wakes the client's thread; sent one by one
/// between requests, every response is a wake-up (and on a busy machine a preemption of the loop thread), while
/// sent together they are taken in one. The wait is the rest of the batch — the time the loop takes to answer
/// the requests that arrived with this one.
final class HTTPConnection: EventLoopChannel, @unchecked Sendable {
    let descriptor: Int32
    let context: ServerCore
    let remoteAddress: String
    let loop: any EventLoop
    var registration = ChannelRegistration()
    /// Bytes read and not yet parsed; lives as long as the connection (pipelined bytes outlive states).
    let input: ReceiveBuffer
    private(set) var state: ConnectionState = .readingHead(HeadReading(wait: .firstHead, deadline: .max))
    /// Response bytes this connection holds in user space, as last reported to the server statistics.
    private var accountedBufferedBytes = 0
    /// The exchange whose buffered response waits for the end of the loop's batch (`sendAtEndOfBatch`). While
    /// it is set, `settle` leaves the registration alone: the send at the batch's end settles again.
    var held: Exchange?
    /// The TLS session the socket's bytes pass through (nil: plain HTTP), and what it waits for.
    let tls: TLSChannel?

    init(fd: Int32, remoteAddress: String, context: ServerCore, loop: any EventLoop, tls: TLSChannel? = nil) {
        descriptor = fd
        self.tls = tls
        self.remoteAddress = remoteAddress
        self.context = context
        self.loop = loop
        input = ReceiveBuffer(spares: loop.receiveSpares)
    }

    var timeouts: ConnectionTimeouts { context.timeouts }

    /// Moves to `new`, which must be an edge of `ConnectionState`'s diagram.
    func transition(to new: ConnectionState) {
        guard ConnectionState.allows(from: state.kind, to: new.kind) else {
            preconditionFailure("illegal connection transition \(state.kind) → \(new.kind)")
        }
        state = new
    }

    /// Replaces the payload of the current state (a deadline moved, bytes were counted): same state, no edge.
    func update(_ new: ConnectionState) {
        precondition(new.kind == state.kind, "update must keep the state: \(state.kind) → \(new.kind)")
        state = new
    }

    /// Starts serving. Called once on the loop, right after accept. The first head must arrive within the
    /// header timeout (a connection that sends nothing is closed silently); only between requests does the
    /// longer idle timeout apply.
    func start() {
        loop.register(self)
        state = .readingHead(HeadReading(wait: .firstHead, deadline: loop.now() &+ timeouts.headerRead))
        settle()
    }

    // MARK: - EventLoopChannel

    /// A hang-up or error is handed to whichever side is waiting: its `read` or `send` then reports it.
    func handleReadiness(_ readiness: Readiness) {
        let failed = readiness.contains(.failed)
        if let tls, !tls.retry.isEmpty {
            // A TLS call waits for the socket's other direction (`TLSChannel.retry`): repeat it now.
            let retry = tls.retry
            tls.retry = []
            if retry == .write, failed || readiness.contains(.writable) { handleReadable() }
            if retry == .read, failed || readiness.contains(.readable) { handleWritable() }
        }
        if failed || readiness.contains(.readable), state.interest(endOfInput: input.endOfInput).contains(.read) {
            handleReadable()
        }
        if failed || readiness.contains(.writable), state.interest(endOfInput: input.endOfInput).contains(.write) {
            handleWritable()
        }
        settle()
    }

    func checkDeadlines(now: UInt64) -> UInt64 {
        guard let expiry = state.expiry(now: now) else { return state.nextDeadline }
        switch expiry {
        case .close:
            close()
        case .requestTimeout:
            respondWithError(HTTPParseError(status: 408, message: "timed out reading the request head"))
        case .bodyTimeout:
            bodyReadTimedOut()
        case .writeStall:
            context.logger.debug("write stalled, aborting connection", [("remote", .string(remoteAddress))])
            abort()
        }
        settle()
        return state.nextDeadline
    }

    /// The loop's batch is over: the held response goes out now (and the connection moves on with its next
    /// request, which may be held again for the same batch's end).
    func sendHeldOutput() {
        guard let exchange = held else { return }
        held = nil
        exchange.wasHeld = true
        pumpResponse(exchange)
        settle()
    }

    /// Called by the loop once it no longer watches the descriptor: close it and leave the server's registry.
    func descriptorReleased() {
        Posix.close(descriptor)
        context.connectionClosed(self)
    }

    /// Finishes an event: parses buffered heads (an exchange answered inline may leave the next pipelined
    /// head buffered), then brings the loop's registration and deadline in line with the state.
    func settle() {
        while case .readingHead = state, !input.isEmpty || input.endOfInput {
            processOneHead()
        }
        if held != nil { return }
        var interest = state.interest(endOfInput: input.endOfInput)
        if let tls, !tls.retry.isEmpty, state.kind != .closed {
            // Only the direction the waiting call needs: its own would be reported ready at once (level-triggered)
            // and the call would fail the same way, a spin until the peer acts.
            interest.subtract(tls.retry == .read ? .write : .read)
            interest.formUnion(tls.retry)
        }
        if interest != registration.applied, state.kind != .closed { loop.setInterest(interest, for: self) }
        let deadline = state.nextDeadline
        if deadline != .max { loop.deadlineChanged(deadline) }
    }

    // MARK: - Reading

    /// The most one read for a body pull asks for: below glibc's 128 KiB mmap threshold, so a piece handed to
    /// the responder (a copy of at most the buffered bytes) is a heap chunk reused from pull to pull rather than
    /// fresh pages to fault in, and large enough that a fast sender's body crosses few loop↔task hand-offs.
    static let bodyReadBytes = 120 * 1024

    private func handleReadable() {
        guard readInput() else { return }
        switch state {
        case .readingHead: break  // `settle` parses
        case .exchanging: serviceBodyPull()
        case .drainingBody: continueDrainingBody()
        case .lingering(var linger):
            linger.discarded += input.readableCount
            input.consume(input.readableCount)
            if input.endOfInput || linger.discarded > 1024 * 1024 { close() } else { update(.lingering(linger)) }
        case .closingAfterWrite: input.consume(input.readableCount)
        case .closed: break
        }
    }

    /// One `read` into `input`, sized for what the state waits for. Returns false when nothing changed (the
    /// socket had no byte: `EAGAIN`).
    func readInput() -> Bool {
        let minimum: Int
        switch state {
        case .exchanging(let exchange):
            if case .pulling(_, let pull, _) = exchange.body {
                minimum = min(max(pull.maxLength, 4096), Self.bodyReadBytes)
            } else {
                minimum = 4096
            }
        case .lingering: minimum = 16 * 1024
        default: minimum = 4096
        }
        if let tls = activeTLS { return readTLSInput(tls, minimum: minimum) }
        let n = Posix.read(descriptor, input.writable(minimum: minimum))
        if n > 0 {
            input.didWrite(n)
        } else if n == 0 {
            input.endOfInput = true
        } else {
            let error = errno
            if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { return false }
            input.endOfInput = true
        }
        return true
    }

    /// Parses buffered bytes while waiting for a head; starts an exchange when one is complete.
    private func processOneHead() {
        guard case .readingHead(var reading) = state else { return }
        // A head usually arrives whole: a new one is parsed by a parser on the stack, boxed only when it must
        // outlive this call (a partial head, a body still to read).
        var local: HTTPRequestParser?
        let consumed: Int
        let event: HTTPParserEvent?
        if let boxed = reading.parser {
            (consumed, event) = boxed.parser.parse(input.readable)
        } else {
            var parser = HTTPRequestParser(limits: context.configuration.limits)
            (consumed, event) = parser.parse(input.readable)
            local = parser
        }
        input.consume(consumed)
        switch event {
        case .head(let head)?:
            // A body-less request needs no parser any more (its `.end` is implied by the framing).
            let parser = head.framing == .none ? nil : reading.parser ?? local.map(ParserBox.init)
            startExchange(head, parser: parser, lastRequest: reading.lastRequest)
        case .error(let error)?:
            respondWithError(error)
        case .end?, .body?:
            // Impossible while reading a head; treat as a protocol error rather than trusting framing.
            respondWithError(HTTPParseError(status: 400, message: "unexpected body"))
        case nil:
            if input.endOfInput {
                close()
                return
            }
            // The header timeout runs from the first byte of a head (slowloris), not from the idle wait; the
            // first head of a connection keeps the deadline counted from the accept.
            if let local { reading.parser = ParserBox(local) }
            switch reading.wait {
            case .idle: reading.deadline = loop.now() &+ timeouts.headerRead
            case .firstHead, .partialHead: break
            }
            reading.wait = .partialHead
            update(.readingHead(reading))
        }
    }

    /// `parser` reads the request's body; nil for a body-less request.
    private func startExchange(_ head: HTTPRequestHead, parser: ParserBox?, lastRequest: Bool) {
        let now = loop.now()
        let exchangeLoop = ExchangeLoop(loop)
        let exchange = Exchange(
            head: head, receivedAt: now, loop: exchangeLoop, parser: parser,
            reuse: head.keepAlive && !lastRequest ? .keepAlive : .close)
        transition(to: .exchanging(exchange))
        let body: any ByteStream =
            head.framing == .none
            ? EmptyByteStream.shared : RequestBodyStream(connection: self, exchange: exchange)
        let request = HTTPRequest(
            method: head.method, target: head.target, versionMajor: head.versionMajor,
            versionMinor: head.versionMinor, headers: head.headers, body: body,
            remoteAddress: remoteAddress, receivedAt: now, loop: exchangeLoop)
        let responder = context.responder
        if let response = responder.immediateResponse(to: request) {
            responseReady(exchange, response)
            return
        }
        let (task, inline) = AsyncBridge.start(
            on: loop, ResponderWork(responder: responder, request: request, connection: self, exchange: exchange))
        exchange.responderStarted(task)
        if let inline { responseReady(exchange, inline) }
    }

    /// The response's last byte is in the kernel: drain what is left of the request body, then serve the
    /// next request — or close, when this was the last one.
    func exchangeFinished(_ exchange: Exchange) {
        exchange.finish(completed: true, now: loop.now())
        if exchange.reuse == .close {
            closeGracefully()
            return
        }
        switch exchange.body {
        case .complete:
            readNextRequest()
        case .unread(let parser, _), .cancelled(let parser), .pulling(let parser, _, _):
            exchange.endPull(.cancelled(parser))?.resume(.failure(ByteStreamError.cancelled))
            transition(to: .drainingBody(BodyDrain(parser: parser, deadline: loop.now() &+ timeouts.bodyRead)))
            continueDrainingBody()
        case .failed:
            closeGracefully()
        }
    }

    func readNextRequest() {
        if input.isEmpty {
            if input.endOfInput {
                close()
                return
            }
            // Going idle: hold no buffers. An idle keep-alive connection then costs only this object and its
            // loop's registration (bench S7); the next read takes a 4 KiB block again, a spare of the loop's
            // when one is left.
            input.releaseStorage()
            transition(to: .readingHead(HeadReading(wait: .idle, deadline: loop.now() &+ timeouts.idle)))
        } else {
            // A pipelined request is already buffered: `settle` parses it.
            transition(to: .readingHead(HeadReading(wait: .partialHead, deadline: loop.now() &+ timeouts.headerRead)))
        }
    }

    // MARK: - Statistics

    /// Reports this connection's user-space response bytes to the server-wide gauge and peak.
    func reportBuffered(_ bytes: Int) {
        guard bytes != accountedBufferedBytes else { return }
        context.statistics.bufferedBytesChanged(by: bytes - accountedBufferedBytes, connectionTotal: bytes)
        accountedBufferedBytes = bytes
    }
}

/// One exchange's responder, run by `AsyncBridge` (stored inline in the bridge: no closure contexts per request).
///
/// The responder's synchronous stretch runs on the loop's thread, where the loop's permit (`request.loop`)
/// applies: a backend handed that permit may answer a brief point lookup in place, and the whole exchange then
/// completes without a thread hop.
private struct ResponderWork: BridgedWork {
    let responder: any HTTPResponder
    let request: HTTPRequest
    let connection: HTTPConnection
    let exchange: Exchange

    func run() async -> HTTPResponse {
        await responder.respond(to: request)
    }

    func deliver(_ response: HTTPResponse) {
        connection.responseReady(exchange, response)
        connection.settle()
    }
}
