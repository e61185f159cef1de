import PortcullisCore

/// Ending connections: server-answered errors, graceful close with lingering, aborts, and drain.
extension HTTPConnection {
    // MARK: - Errors the server answers itself

    /// Answers a malformed or timed-out request head with the JSON error shape and `Connection: close`, then
    /// closes (after lingering, so the client reads the response rather than a reset).
    func respondWithError(_ error: HTTPParseError) {
        let body = ResponseHead.errorBody(status: error.status, message: error.message)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160 + body.count)
        bytes.append(contentsOf: ResponseHead.statusLine(error.status))
        bytes.append(contentsOf: context.dateHeader.current())
        bytes.append(contentsOf: "Content-Type: application/json\r\n".utf8)
        bytes.append(contentsOf: ResponseHead.contentLengthPrefix)
        DecimalText.append(Int64(body.count), to: &bytes)
        bytes.append(contentsOf: [0x0D, 0x0A])
        bytes.append(contentsOf: ResponseHead.connectionClose)
        bytes.append(contentsOf: [0x0D, 0x0A])
        bytes.append(contentsOf: body)
        let response = ErrorResponse(output: SendBuffer(bytes: bytes))
        transition(to: .closingAfterWrite(response))
        // Whatever else the client sent is not read any more.
        input.consume(input.readableCount)
        switch send(&response.output, counting: nil) {
        case .flushed: closeGracefully()
        case .blocked: break
        case .failed: close()
        }
    }

    // MARK: - Closing

    /// Shuts down our side, then reads and discards until the peer closes or the linger time passes.
    func closeGracefully() {
        if case .exchanging(let exchange) = state { abandonExchange(exchange) }
        activeTLS?.session.shutdown()
        Posix.shutdownOutput(descriptor)
        input.consume(input.readableCount)
        if input.endOfInput { return close() }
        transition(to: .lingering(Linger(deadline: loop.now() &+ timeouts.linger)))
    }

    /// Closes with a reset, so a client reading a close-delimited or partial body sees an error, not an end.
    func abort() {
        guard state.kind != .closed else { return }
        Posix.resetOnClose(descriptor)
        close()
    }

    /// Releases everything; the loop lets go of the descriptor (`descriptorReleased` closes it).
    func close() {
        guard state.kind != .closed else { return }
        if case .exchanging(let exchange) = state { abandonExchange(exchange) }
        transition(to: .closed)
        reportBuffered(0)
        loop.deregister(self)
    }

    /// Ends an exchange that cannot complete: fails a waiting body pull, cancels the responder (whose answer
    /// is then reported as incomplete when it arrives) or the response stream, and reports `completed: false`
    /// unless the summary was already reported.
    func abandonExchange(_ exchange: Exchange) {
        let truncated = ByteStreamError.truncated(
            expected: exchange.bodyExpectedLength ?? -1, received: exchange.bodyBytesReceived)
        exchange.endPull(.failed(truncated))?.resume(.failure(truncated))
        switch exchange.response {
        case .awaitingResponder(let task):
            task?.cancel()
        case .sending(let producer):
            if case .stream(let stream, _, _, _) = producer { stream.cancel() }
            exchange.finish(completed: false, now: loop.now())
        case .finished:
            break
        }
    }

    /// Called by the server when it starts draining: idle connections close now, busy ones after their
    /// current exchange (which is told `Connection: close` if its head is not written yet), a drained body is
    /// given up with a graceful close, and a head being read becomes the last request.
    func beginDrain() {
        switch state {
        case .readingHead(var reading):
            if reading.wait != .partialHead && input.isEmpty {
                close()
            } else {
                reading.lastRequest = true
                update(.readingHead(reading))
            }
        case .exchanging(let exchange):
            exchange.reuse = .close
        case .drainingBody:
            closeGracefully()
        case .closingAfterWrite, .lingering, .closed:
            break
        }
        settle()
    }
}
