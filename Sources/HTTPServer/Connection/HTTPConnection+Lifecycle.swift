import PortcullisCore
#if canImport(Glibc)
import Glibc
#endif

/// Ending connections: server-answered errors, graceful close with lingering, aborts, and drain.
extension HTTPConnection {
    // MARK: - Errors the server answers itself

    /// Answers a malformed or timed-out request with the JSON error shape and `Connection: close`, then
    /// closes (after lingering so the client reads the response rather than a reset).
    func respondWithError(_ error: HTTPParseError) {
        guard phase != .closed else { return }
        if let exchange, !exchange.reported {
            exchange.report(completed: false)
        }
        phase = .closingAfterWrite
        suspendReading()
        setReadDeadline(.none)
        let body = ResponseHead.errorBody(status: error.status, message: error.message)
        output.removeAll(keepingCapacity: true)
        outputOffset = 0
        output.append(contentsOf: ResponseHead.statusLine(error.status))
        output.append(contentsOf: context.dateHeader.current())
        output.append(contentsOf: "Content-Type: application/json\r\n".utf8)
        output.append(contentsOf: ResponseHead.contentLengthPrefix)
        DecimalText.append(Int64(body.count), to: &output)
        output.append(contentsOf: [0x0D, 0x0A])
        output.append(contentsOf: ResponseHead.connectionClose)
        output.append(contentsOf: [0x0D, 0x0A])
        output.append(contentsOf: body)
        _ = flushOutput()
        if phase == .closingAfterWrite && outputOffset == output.count { closeGracefully() }
    }

    // MARK: - Closing

    /// Shuts down our side, then reads and discards until the peer closes or the linger time passes.
    func closeGracefully() {
        guard phase != .closed, phase != .lingering else { return }
        if let exchange { abandonExchange(exchange) }
        phase = .lingering
        suspendWriting()
        shutdown(fd, Int32(SHUT_WR))
        input.consume(input.readableCount)
        if peerClosed { close(); return }
        setReadDeadline(.linger)
        resumeReading()
    }

    /// Closes with a reset, so a client reading a close-delimited or partial body sees an error, not an end.
    func abort() {
        guard phase != .closed else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Releases everything; the loop closes the descriptor at the end of its turn (`descriptorReleased`).
    func close() {
        guard phase != .closed else { return }
        if let exchange { abandonExchange(exchange) }
        phase = .closed
        exchange = nil
        output = []
        reportBuffered(0)
        loop.remove(self)
    }

    /// Ends an exchange that cannot complete: fails a pending body pull, cancels the responder and any
    /// response stream, and reports `completed: false` (unless it was already reported).
    func abandonExchange(_ exchange: Exchange) {
        failPendingPull(exchange, ByteStreamError.truncated(
            expected: exchange.bodyExpectedLength ?? -1, received: exchange.bodyBytesReceived))
        if case .open = exchange.body { exchange.body = .failed(ByteStreamError.cancelled) }
        if case .stream(let stream, _, _, _) = exchange.writer {
            stream.cancel()
            exchange.writer = .buffered
        }
        if exchange.status == 0 {
            // The responder has not answered yet; its response will be reported when it arrives.
            exchange.responderTask?.cancel()
        } else {
            exchange.report(completed: false)
        }
    }

    /// Called by the server when it starts draining: idle connections close now, busy ones after their
    /// current exchange (which is told `Connection: close` if its head is not written yet).
    func beginDrain() {
        guard phase != .closed else { return }
        draining = true
        if phase == .awaitingHead && parser.isAtMessageBoundary && input.isEmpty {
            close()
        } else if let exchange, !exchange.responseStarted {
            exchange.closeAfter = true
        }
    }
}
