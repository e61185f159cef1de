import CEpoll
import PortcullisCore
#if canImport(Glibc)
import Glibc
#endif

/// One accepted TCP connection: the I/O shell around `HTTPRequestParser`.
///
/// Threading: every field is confined to its event loop's thread (`EventLoop`, hence `@unchecked
/// Sendable`); the loop delivers socket readiness (`handleEvents`), deadlines (`checkDeadlines`) and jobs
/// from other threads (`loop.execute`). The connection asks for readability only while it waits for a request
/// head, while the responder pulls body bytes, while it drains an unread body and while it lingers before
/// close — never while a response is outstanding, so pipelined requests wait in the kernel buffer and are
/// answered strictly in order. It asks for writability only while a send would block.
///
/// The loop→async bridge (`AsyncBridge`): once a head is complete, the responder starts as an immediate
/// task on the loop thread; a response produced without suspending is written at once, otherwise it is
/// handed back with `loop.execute` when ready. Streamed response chunks are pulled the same way, and each
/// request body `next` hops onto the loop and resumes its continuation from there, so neither side ever runs
/// ahead of the other.
final class HTTPConnection: @unchecked Sendable {
    enum Phase {
        /// Waiting for (the rest of) a request head.
        case awaitingHead
        /// A request is being answered.
        case exchanging
        /// The response is written; discarding the rest of an unread request body.
        case drainingBody
        /// An error response is queued; close once it is written.
        case closingAfterWrite
        /// Our side is shut down; reading and discarding until the peer closes or the linger time ends.
        case lingering
        case closed
    }

    enum ReadDeadline { case none, idle, header, body, linger }

    let fd: Int32
    let context: ServerCore
    let remoteAddress: String

    /// The parser lives in a box that exists only while a request is in progress: an idle keep-alive
    /// connection holds none (its ~250 bytes of state, times 10,000 idle connections in bench S7). Between
    /// messages a fresh parser is indistinguishable from a used one (`isAtMessageBoundary`).
    private final class ParserBox {
        var parser: HTTPRequestParser
        init(_ parser: HTTPRequestParser) { self.parser = parser }
    }
    private var parserBox: ParserBox?

    var parser: HTTPRequestParser {
        _read {
            if let parserBox { yield parserBox.parser } else { yield HTTPRequestParser(limits: context.configuration.limits) }
        }
        _modify {
            let box = parserBox ?? ParserBox(HTTPRequestParser(limits: context.configuration.limits))
            parserBox = box
            yield &box.parser
        }
    }

    /// Drops the parser box of an idle connection (only at a message boundary, where a fresh one is equal).
    func releaseIdleParser() {
        if let parserBox, parserBox.parser.isAtMessageBoundary { self.parserBox = nil }
    }
    let input = ReceiveBuffer()
    var output: [UInt8] = []
    var outputOffset = 0
    var phase = Phase.awaitingHead
    var exchange: Exchange?
    var peerClosed = false
    /// The server is draining: finish the current exchange, then close.
    var draining = false
    var drainedBodyBytes: Int64 = 0
    var lingerDiscarded = 0
    /// Response bytes this connection holds in user space, as last reported to the server statistics.
    var accountedBufferedBytes = 0
    private var processingHeads = false
    private var headsPending = false

    let loop: EventLoop
    /// What the connection wants the kernel to report; `registeredInterest` is what the loop has registered.
    private(set) var wantReading = false
    private(set) var wantWriting = false
    private var registeredInterest: UInt32 = 0
    /// Inside `handleEvents` interest changes are applied once at its end, so an exchange answered inline
    /// (stop reading, respond, read again) costs no `epoll_ctl` at all.
    private var deferInterestUpdates = false

    private var readDeadlineKind = ReadDeadline.none
    private var readDeadline: UInt64 = .max
    private var writeDeadline: UInt64 = .max

    init(fd: Int32, remoteAddress: String, context: ServerCore, loop: EventLoop) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.context = context
        self.loop = loop
    }

    /// Starts serving. Called once on the loop, right after accept.
    func start() {
        loop.add(self)
        // A new connection must deliver its first head within the header timeout (silently closed if it
        // sends nothing at all); only between requests does the longer idle timeout apply.
        setReadDeadline(.header)
        resumeReading()
    }

    // MARK: - Readiness

    /// Called by the loop with the `epoll` events of this connection's descriptor. A hang-up or error is
    /// handed to whichever side is waiting: its `read` or `send` then reports it.
    func handleEvents(_ events: UInt32) {
        let failed = events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        deferInterestUpdates = true
        if wantReading && (failed || events & EPOLLIN.rawValue != 0) {
            handleReadable()
        }
        if wantWriting && phase != .closed && (failed || events & EPOLLOUT.rawValue != 0) {
            handleWritable()
        }
        deferInterestUpdates = false
        applyInterest()
    }

    func resumeReading() {
        guard phase != .closed, !peerClosed else { return }
        wantReading = true
        applyInterest()
    }

    func suspendReading() {
        wantReading = false
        applyInterest()
    }

    func resumeWriting() {
        guard !wantWriting, phase != .closed else { return }
        wantWriting = true
        applyInterest()
        setWriteDeadline(active: true)
    }

    func suspendWriting() {
        guard wantWriting else { return }
        wantWriting = false
        applyInterest()
        setWriteDeadline(active: false)
    }

    /// Brings the loop's registration in line with `wantReading` / `wantWriting` (deferred inside
    /// `handleEvents`). A connection that wants neither leaves the epoll set.
    private func applyInterest() {
        guard !deferInterestUpdates, phase != .closed else { return }
        let interest = (wantReading ? EPOLLIN.rawValue : 0) | (wantWriting ? EPOLLOUT.rawValue : 0)
        guard interest != registeredInterest else { return }
        loop.setInterest(fd: fd, from: registeredInterest, to: interest)
        registeredInterest = interest
    }

    /// Called by the loop at the end of the turn in which the connection closed: the descriptor is closed
    /// only now, so no event of the same `epoll_wait` batch can reach a connection that reused its number.
    func descriptorReleased() {
        Glibc.close(fd)
        context.connectionClosed(self)
    }

    // MARK: - Deadlines

    func setReadDeadline(_ kind: ReadDeadline) {
        readDeadlineKind = kind
        let duration: UInt64
        switch kind {
        case .none: duration = .max
        case .idle: duration = context.idleNanos
        case .header: duration = context.headerReadNanos
        case .body: duration = context.bodyReadNanos
        case .linger: duration = context.lingerNanos
        }
        readDeadline = duration == .max ? .max : MonotonicClock.nanoseconds() &+ duration
        armTimer()
    }

    /// Starts or refreshes (on progress) the write stall deadline, or clears it.
    func setWriteDeadline(active: Bool) {
        writeDeadline = active ? MonotonicClock.nanoseconds() &+ context.writeNanos : .max
        armTimer()
    }

    private func armTimer() {
        loop.deadlineChanged(min(readDeadline, writeDeadline))
    }

    /// Called by the loop's timer: acts on every deadline that has passed and returns the next one (`.max`
    /// when there is none, or the connection closed).
    func checkDeadlines(now: UInt64) -> UInt64 {
        guard phase != .closed else { return .max }
        if now >= writeDeadline {
            context.logger.debug("write stalled, aborting connection", [("remote", .string(remoteAddress))])
            abort()
            return .max
        }
        if now >= readDeadline {
            readDeadline = .max
            switch readDeadlineKind {
            case .none: break
            case .idle, .linger: close()
            case .header:
                if parser.isAtMessageBoundary && input.isEmpty {
                    close()
                } else {
                    respondWithError(HTTPParseError(status: 408, message: "timed out reading the request head"))
                }
            case .body:
                bodyReadTimedOut()
            }
            if phase == .closed { return .max }
        }
        return min(readDeadline, writeDeadline)
    }

    // MARK: - Reading

    private func handleReadable() {
        guard phase != .closed else { return }
        let minimum: Int
        if phase == .exchanging, let pull = exchange?.pendingPull {
            minimum = min(max(pull.maxLength, 4096), 64 * 1024)
        } else {
            minimum = phase == .lingering ? 16 * 1024 : 4096
        }
        let region = input.writable(minimum: minimum)
        let n = Glibc.read(fd, region.baseAddress, region.count)
        if n > 0 {
            input.didWrite(n)
        } else if n == 0 {
            peerClosed = true
            suspendReading()
        } else {
            let error = errno
            if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { return }
            peerClosed = true
            suspendReading()
        }
        switch phase {
        case .awaitingHead: processHeads()
        case .exchanging: serviceBodyPull()
        case .drainingBody: continueDrainingBody()
        case .lingering:
            lingerDiscarded += input.readableCount
            input.consume(input.readableCount)
            if peerClosed || lingerDiscarded > 1024 * 1024 { close() }
        case .closingAfterWrite:
            input.consume(input.readableCount)
            suspendReading()
        case .closed: break
        }
    }

    /// Parses buffered bytes while waiting for a head; starts an exchange when one is complete.
    ///
    /// Re-entrant calls (an exchange answered inline finishes and finds a pipelined head buffered) are
    /// turned into another turn of this loop, so a burst of pipelined requests never deepens the stack.
    func processHeads() {
        if processingHeads {
            headsPending = true
            return
        }
        processingHeads = true
        defer { processingHeads = false }
        repeat {
            headsPending = false
            processOneHead()
        } while headsPending && phase == .awaitingHead
    }

    private func processOneHead() {
        let (consumed, event) = parser.parse(input.readable)
        input.consume(consumed)
        switch event {
        case .head(let head)?:
            startExchange(head)
        case .error(let error)?:
            respondWithError(error)
        case .end?, .body?:
            // Impossible while reading a head; treat as a protocol error rather than trusting framing.
            respondWithError(HTTPParseError(status: 400, message: "unexpected body"))
        case nil:
            if peerClosed {
                close()
                return
            }
            // The header timeout runs from the first byte of a head (slowloris), not from the idle wait.
            if readDeadlineKind != .header && !parser.isAtMessageBoundary { setReadDeadline(.header) }
            resumeReading()
        }
    }

    private func startExchange(_ head: HTTPRequestHead) {
        let now = MonotonicClock.nanoseconds()
        let exchange = Exchange(head: head, receivedAt: now)
        if head.framing == .none {
            // The parser holds the `.end` of a body-less request; take it now.
            _ = parser.parse(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        self.exchange = exchange
        phase = .exchanging
        suspendReading()
        setReadDeadline(.none)
        exchange.closeAfter = !head.keepAlive || draining
        let body: any ByteStream = head.framing == .none
            ? EmptyByteStream.shared : RequestBodyStream(connection: self, exchange: exchange)
        let request = HTTPRequest(
            method: head.method, target: head.target, versionMajor: head.versionMajor,
            versionMinor: head.versionMinor, headers: head.headers, body: body,
            remoteAddress: remoteAddress, receivedAt: now)
        let responder = context.responder
        if let response = responder.immediateResponse(to: request) {
            responseReady(exchange, response)
            return
        }
        // The responder's synchronous stretch runs marked as an event loop (`EventLoopInline`): a backend may
        // then answer a brief point lookup in place and the whole exchange completes without a thread hop.
        let (task, inline) = EventLoopInline.run {
            AsyncBridge<HTTPResponse>.start(on: loop) {
                await responder.respond(to: request)
            } deliver: { [self] response in
                self.responseReady(exchange, response)
            }
        }
        exchange.responderTask = task
        if let inline { responseReady(exchange, inline) }
    }

    /// After a response is complete: drain what is left of the request body, then serve the next request.
    func exchangeFinished() {
        guard let exchange else { return }
        exchange.report(completed: true)
        if exchange.closeAfter || draining {
            closeGracefully()
            return
        }
        if case .open = exchange.body {
            phase = .drainingBody
            drainedBodyBytes = 0
            failPendingPull(exchange, ByteStreamError.cancelled)
            continueDrainingBody()
            return
        }
        readNextRequest()
    }

    func readNextRequest() {
        exchange = nil
        phase = .awaitingHead
        if input.isEmpty {
            // Going idle: hold no buffers. An idle keep-alive connection then costs only this object and its
            // loop's table entry (bench S7: 10,000 idle connections); the next read allocates 4 KiB again.
            input.releaseStorage()
            if output.isEmpty { output = [] }
            releaseIdleParser()
        } else if output.capacity > 64 * 1024 && output.isEmpty {
            output = []
        }
        if input.isEmpty {
            if peerClosed { close(); return }
            setReadDeadline(.idle)
            resumeReading()
        } else {
            // A pipelined request is already buffered.
            setReadDeadline(.header)
            processHeads()
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

extension Exchange {
    var bodyExpectedLength: Int64? {
        if case .length(let n) = head.framing { return n }
        return nil
    }
}
