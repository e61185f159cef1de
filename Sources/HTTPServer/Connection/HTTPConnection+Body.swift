import PortcullisCore

/// Request bodies: read from the socket only while the responder pulls, and drained after the response.
extension HTTPConnection {
    /// A `next` call from the request body stream, now on the connection's event loop. `resume` is called
    /// exactly once, now or when bytes arrive.
    func pullBody(_ exchange: Exchange, maxLength: Int, resume: @escaping (Result<[UInt8]?, any Error>) -> Void) {
        pullBody(exchange, maxLength: maxLength, gathers: false) { resume($0.map { $0?.first }) }
    }

    /// A `next` (one piece) or `nextPieces` (`gathers`: as many pieces as the socket has ready, up to
    /// `maxLength` bytes together) from the request body stream, now on the connection's event loop.
    func pullBody(
        _ exchange: Exchange, maxLength: Int, gathers: Bool,
        resume: @escaping (Result<[[UInt8]]?, any Error>) -> Void
    ) {
        defer { settle() }
        guard case .exchanging(let current) = state, current === exchange else {
            resume(.failure(ByteStreamError.cancelled))
            return
        }
        let invited: Bool
        switch exchange.body {
        case .complete: return resume(.success(nil))
        case .failed(let error): return resume(.failure(error))
        // A cancelled stream stays cancelled; the stream contract forbids concurrent `next` calls.
        case .cancelled, .pulling: return resume(.failure(ByteStreamError.cancelled))
        case .unread(_, let wasInvited): invited = wasInvited
        }
        exchange.startPull(
            Exchange.PendingPull(maxLength: maxLength, gathers: gathers, resume: resume),
            deadline: loop.now() &+ timeouts.bodyRead)
        if !invited && !exchange.responseStarted {
            // The responder wants the body: now, and only now, invite the client to send it. If the socket is
            // full the rest of the interim response goes out when it drains; reading goes on meanwhile.
            exchange.output.bytes.append(contentsOf: ResponseHead.continueResponse)
            if send(&exchange.output, counting: exchange) == .failed {
                close()
                return
            }
        }
        // Nothing buffered: read now rather than after a round through the loop's poll (registering read
        // interest, waiting, unregistering) — a sender ahead of the responder has the bytes waiting already.
        if input.isEmpty && !input.endOfInput { _ = readInput() }
        serviceBodyPull()
    }

    /// Satisfies the waiting pull from buffered bytes, or leaves it waiting for the socket. A gathering pull
    /// takes piece after piece while the socket has bytes and the pull has room; the pieces never outlive this
    /// call (what is gathered is delivered before waiting).
    func serviceBodyPull() {
        guard case .exchanging(let exchange) = state, case .pulling(let parser, let pull, _) = exchange.body else {
            return
        }
        var pieces: [[UInt8]] = []
        var gathered = 0
        while true {
            let (consumed, event) = parser.parser.parse(input.readable, maxBodyBytes: pull.maxLength - gathered)
            input.consume(consumed)
            exchange.bytesIn += Int64(consumed)
            switch event {
            case nil:
                if !pieces.isEmpty {
                    exchange.endPull(.unread(parser, invited: true))?.resume(.success(pieces))
                } else if input.endOfInput {
                    let error = ByteStreamError.truncated(
                        expected: exchange.bodyExpectedLength ?? -1, received: exchange.bodyBytesReceived)
                    exchange.reuse = .close
                    exchange.endPull(.failed(error))?.resume(.failure(error))
                } else {
                    exchange.extendPull(deadline: loop.now() &+ timeouts.bodyRead)
                }
            case .body(let bytes)?:
                exchange.bodyBytesReceived += Int64(bytes.count)
                pieces.append(bytes)
                gathered += bytes.count
                if pull.gathers && gathered < pull.maxLength
                    && (!input.isEmpty || (!input.endOfInput && readInput()))
                {
                    continue
                }
                exchange.endPull(.unread(parser, invited: true))?.resume(.success(pieces))
            case .end?:
                exchange.endPull(.complete)?.resume(.success(pieces.isEmpty ? nil : pieces))
            case .error(let error)?:
                exchange.reuse = .close
                exchange.endPull(.failed(error))?.resume(.failure(error))
            case .head?:
                exchange.reuse = .close
                exchange.endPull(.failed(ByteStreamError.cancelled))?.resume(.failure(ByteStreamError.cancelled))
            }
            return
        }
    }

    /// The responder cancelled the body stream. The bytes still on the wire are drained after the response —
    /// unless the client was never invited to send them (`Expect: 100-continue`): then it closes.
    func cancelBody(_ exchange: Exchange) {
        defer { settle() }
        guard case .exchanging(let current) = state, current === exchange else { return }
        switch exchange.body {
        case .unread(let parser, let invited):
            if !invited { exchange.reuse = .close }
            _ = exchange.endPull(.cancelled(parser))
        case .pulling(let parser, _, _):
            exchange.endPull(.cancelled(parser))?.resume(.failure(ByteStreamError.cancelled))
        case .complete, .cancelled, .failed:
            break
        }
    }

    /// The waiting pull got no byte for the body timeout: it fails, and the connection closes after the
    /// response (the rest of the body cannot be trusted to come).
    func bodyReadTimedOut() {
        guard case .exchanging(let exchange) = state else { return }
        exchange.reuse = .close
        exchange.endPull(.failed(ByteStreamError.timedOut))?.resume(.failure(ByteStreamError.timedOut))
    }

    /// Discards the rest of an unread body (up to `maxDrainBodyBytes`) so the connection can be reused.
    func continueDrainingBody() {
        guard case .drainingBody(var drain) = state else { return }
        let limit = context.configuration.maxDrainBodyBytes
        while true {
            let (consumed, event) = drain.parser.parser.parse(input.readable)
            input.consume(consumed)
            drain.drained += Int64(consumed)
            guard drain.drained <= limit else { return close() }
            switch event {
            case .body?:
                continue
            case .end?:
                return readNextRequest()
            case .error?, .head?:
                return close()
            case nil:
                if input.endOfInput { return close() }
                drain.deadline = loop.now() &+ timeouts.bodyRead
                update(.drainingBody(drain))
                return
            }
        }
    }
}
