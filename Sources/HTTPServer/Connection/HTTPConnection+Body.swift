import PortcullisCore

/// Request bodies: read from the socket only while the responder pulls, and drained after the response.
extension HTTPConnection {
    /// A `next` call from the request body stream, now on the connection's event loop.
    func pullBody(_ exchange: Exchange, maxLength: Int, continuation: CheckedContinuation<[UInt8]?, any Error>) {
        guard exchange === self.exchange, phase == .exchanging, !exchange.bodyCancelled else {
            continuation.resume(throwing: ByteStreamError.cancelled)
            return
        }
        switch exchange.body {
        case .ended:
            continuation.resume(returning: nil)
            return
        case .failed(let error):
            continuation.resume(throwing: error)
            return
        case .open:
            break
        }
        guard exchange.pendingPull == nil else {
            // The stream contract forbids concurrent `next` calls.
            continuation.resume(throwing: ByteStreamError.cancelled)
            return
        }
        exchange.pendingPull = Exchange.PendingPull(maxLength: maxLength, continuation: continuation)
        if exchange.head.expectsContinue && !exchange.continueSent && !exchange.responseStarted {
            // The responder wants the body: now, and only now, invite the client to send it.
            exchange.continueSent = true
            output.append(contentsOf: ResponseHead.continueResponse)
            // If the socket is full the write source finishes the interim response; reading goes on.
            if flushOutput() { suspendWriting() }
            guard phase == .exchanging else { return }
        }
        serviceBodyPull()
    }

    /// Satisfies a pending pull from buffered bytes, or reads the socket for more.
    func serviceBodyPull() {
        guard let exchange, let pull = exchange.pendingPull else {
            suspendReading()
            return
        }
        let (consumed, event) = parser.parse(input.readable, maxBodyBytes: pull.maxLength)
        input.consume(consumed)
        exchange.bytesIn += Int64(consumed)
        switch event {
        case nil:
            if peerClosed {
                exchange.body = .failed(ByteStreamError.truncated(
                    expected: exchange.bodyExpectedLength ?? -1, received: exchange.bodyBytesReceived))
                exchange.closeAfter = true
                finishPull(exchange, .failure(ByteStreamError.truncated(
                    expected: exchange.bodyExpectedLength ?? -1, received: exchange.bodyBytesReceived)))
            } else {
                setReadDeadline(.body)
                resumeReading()
            }
        case .body(let bytes)?:
            exchange.bodyBytesReceived += Int64(bytes.count)
            finishPull(exchange, .success(bytes))
        case .end?:
            exchange.body = .ended
            finishPull(exchange, .success(nil))
        case .error(let error)?:
            exchange.body = .failed(error)
            exchange.closeAfter = true
            finishPull(exchange, .failure(error))
        case .head?:
            exchange.body = .failed(ByteStreamError.cancelled)
            exchange.closeAfter = true
            finishPull(exchange, .failure(ByteStreamError.cancelled))
        }
    }

    private func finishPull(_ exchange: Exchange, _ result: Result<[UInt8]?, any Error>) {
        suspendReading()
        setReadDeadline(.none)
        guard let pull = exchange.pendingPull else { return }
        exchange.pendingPull = nil
        pull.continuation.resume(with: result)
    }

    func failPendingPull(_ exchange: Exchange, _ error: any Error) {
        guard let pull = exchange.pendingPull else { return }
        exchange.pendingPull = nil
        if phase == .exchanging {
            suspendReading()
            setReadDeadline(.none)
        }
        pull.continuation.resume(throwing: error)
    }

    /// The responder cancelled the body stream. The bytes still on the wire are drained after the response.
    func cancelBody(_ exchange: Exchange) {
        guard exchange === self.exchange, phase == .exchanging else { return }
        exchange.bodyCancelled = true
        failPendingPull(exchange, ByteStreamError.cancelled)
    }

    func bodyReadTimedOut() {
        guard phase == .exchanging, let exchange else {
            // Draining an unread body that does not come: give up on the connection.
            close()
            return
        }
        exchange.body = .failed(ByteStreamError.timedOut)
        exchange.closeAfter = true
        failPendingPull(exchange, ByteStreamError.timedOut)
    }

    /// Discards the rest of an unread body (up to `maxDrainBodyBytes`) so the connection can be reused.
    func continueDrainingBody() {
        guard let exchange else {
            readNextRequest()
            return
        }
        let limit = context.configuration.maxDrainBodyBytes
        while true {
            let (consumed, event) = parser.parse(input.readable)
            input.consume(consumed)
            drainedBodyBytes += Int64(consumed)
            guard drainedBodyBytes <= limit else {
                close()
                return
            }
            switch event {
            case .body?:
                continue
            case .end?:
                exchange.body = .ended
                suspendReading()
                readNextRequest()
                return
            case .error?, .head?:
                close()
                return
            case nil:
                if peerClosed {
                    close()
                    return
                }
                setReadDeadline(.body)
                resumeReading()
                return
            }
        }
    }
}
