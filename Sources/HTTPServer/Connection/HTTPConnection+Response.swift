import PortcullisCore
#if canImport(Glibc)
import Glibc
#endif

/// Responses: head rendering, body writing with backpressure, and the end of an exchange.
extension HTTPConnection {
    /// The responder's answer, now on the connection's loop.
    func responseReady(_ exchange: Exchange, _ response: HTTPResponse) {
        exchange.status = response.status
        exchange.onComplete = response.onComplete
        exchange.responderTask = nil
        guard exchange === self.exchange, phase == .exchanging else {
            // The connection went away while the responder worked.
            if case .stream(let stream, _) = response.body { stream.cancel() }
            exchange.report(completed: false)
            return
        }
        let head = exchange.head
        switch exchange.body {
        case .open:
            if head.expectsContinue && !exchange.continueSent {
                // Answered without reading: the client may never send the body, so do not wait for it.
                exchange.closeAfter = true
            } else if let expected = exchange.bodyExpectedLength,
                      expected - exchange.bodyBytesReceived > context.configuration.maxDrainBodyBytes {
                exchange.closeAfter = true
            }
        case .failed:
            exchange.closeAfter = true
        case .ended:
            break
        }
        if draining { exchange.closeAfter = true }
        writeHead(exchange, response)
        pumpResponse()
    }

    private func writeHead(_ exchange: Exchange, _ response: HTTPResponse) {
        let status = response.status
        let bodyAllowed = !((100..<200).contains(status) || status == 204 || status == 304)
        let isHead = exchange.isHead
        var length: Int64?
        switch response.body {
        case .empty:
            length = 0
            if isHead, let declared = response.headers["Content-Length"], let n = Int64(declared), n >= 0 {
                length = n
            }
        case .bytes(let bytes): length = Int64(bytes.count)
        case .stream(_, let declared): length = declared
        case .file(let region): length = region.length
        }
        let http11 = exchange.head.versionMinor == 1
        let chunked = bodyAllowed && length == nil && http11
        if bodyAllowed && length == nil && !http11 && !isHead {
            exchange.closeAfter = true  // HTTP/1.0: the end of the body is the end of the connection
        }

        if output.capacity == 0 { output.reserveCapacity(1024) }  // released while idle: one allocation, not a growth series
        output.append(contentsOf: ResponseHead.statusLine(status))
        output.append(contentsOf: context.dateHeader.current())
        for (name, value) in response.headers.fields {
            if Self.isFramingField(name) { continue }
            guard ResponseHead.isSafeField(name: name, value: value) else {
                context.logger.warning("dropped an unsafe response header field", [("name", .string(name))])
                continue
            }
            output.append(contentsOf: name.utf8)
            output.append(0x3A)
            output.append(0x20)
            output.append(contentsOf: value.utf8)
            output.append(0x0D)
            output.append(0x0A)
        }
        if bodyAllowed {
            if let length {
                output.append(contentsOf: ResponseHead.contentLengthPrefix)
                DecimalText.append(length, to: &output)
                output.append(0x0D)
                output.append(0x0A)
            } else if chunked {
                output.append(contentsOf: ResponseHead.chunked)
            }
        }
        output.append(contentsOf: exchange.closeAfter ? ResponseHead.connectionClose : ResponseHead.connectionKeepAlive)
        output.append(0x0D)
        output.append(0x0A)

        guard bodyAllowed && !isHead else {
            if case .stream(let stream, _) = response.body { stream.cancel() }
            exchange.writer = .buffered
            return
        }
        switch response.body {
        case .empty:
            exchange.writer = .buffered
        case .bytes(let bytes):
            output.append(contentsOf: bytes)
            exchange.writer = .buffered
        case .stream(let stream, let declared):
            exchange.writer = .stream(stream, remaining: declared, chunked: chunked, pulling: false)
        case .file(let region):
            if region.length <= Self.inlineFileBytes && appendFile(region) {
                exchange.writer = .buffered
            } else {
                exchange.writer = .file(region, offset: region.offset, remaining: region.length)
            }
        }
    }

    /// File regions up to this size are read into the output buffer behind the head and sent with it in one
    /// `send`: for a small object that is one syscall and one TCP segment instead of a `send` of the head and a
    /// `sendfile` of the body (two segments, two wake-ups of the client). The copy of a few KiB costs less than
    /// either (bench S3, 4 KiB objects).
    static let inlineFileBytes: Int64 = 16 * 1024

    /// Appends the whole region to `output`; false (and `output` unchanged) when the file is shorter than the
    /// region or unreadable, so `sendfile` runs and reports it the usual way.
    private func appendFile(_ region: FileRegion) -> Bool {
        let length = Int(region.length)
        guard length > 0 else { return true }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: length))
        var filled = 0
        while filled < length {
            let n = output.withUnsafeMutableBytes { buffer in
                pread(region.descriptor, buffer.baseAddress! + start + filled, length - filled,
                      off_t(region.offset) + off_t(filled))
            }
            if n > 0 {
                filled += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                output.removeLast(length)
                return false
            }
        }
        return true
    }

    /// `Content-Length`, `Transfer-Encoding` and `Connection` are the server's to set.
    private static func isFramingField(_ name: String) -> Bool {
        switch name.utf8.count {
        case 10: return HTTPHeaders.equalsIgnoringCase(name, "connection")
            || HTTPHeaders.equalsIgnoringCase(name, "keep-alive")
        case 14: return HTTPHeaders.equalsIgnoringCase(name, "content-length")
        case 17: return HTTPHeaders.equalsIgnoringCase(name, "transfer-encoding")
        default: return false
        }
    }

    /// Writes as much of the response as the socket takes; pulls the next stream chunk only once the
    /// previous one is entirely in the kernel, so at most one chunk per connection sits in user space.
    func pumpResponse() {
        guard phase == .exchanging, let exchange else { return }
        while true {
            if outputOffset < output.count {
                reportBuffered(output.count - outputOffset)
                guard flushOutput() else { return }
            }
            switch exchange.writer {
            case .pending:
                suspendWriting()
                return
            case .buffered:
                suspendWriting()
                exchangeFinished()
                return
            case .file(let region, let offset, let remaining):
                if remaining == 0 {
                    exchange.writer = .buffered
                    continue
                }
                var position = off_t(offset)
                let n = sendfile(fd, region.descriptor, &position, Int(min(remaining, 1 << 30)))
                if n > 0 {
                    exchange.bytesOut += Int64(n)
                    if exchange.firstByteAt == nil { exchange.firstByteAt = MonotonicClock.nanoseconds() }
                    exchange.writer = .file(region, offset: offset + Int64(n), remaining: remaining - Int64(n))
                    suspendWriting()
                    continue
                }
                let error = errno
                if n < 0 && error == EINTR { continue }
                if n < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
                    resumeWriting()
                    return
                }
                if n == 0 {
                    context.logger.warning("file shorter than its region, aborting response",
                                           [("remote", .string(remoteAddress))])
                }
                abort()
                return
            case .stream(let stream, let remaining, let chunked, let pulling):
                suspendWriting()
                if pulling { return }
                exchange.writer = .stream(stream, remaining: remaining, chunked: chunked, pulling: true)
                // With the declared length reached, one more pull must confirm the end of the stream.
                let maxLength = remaining.map { max(1, Int(clamping: min($0, Int64(context.configuration.responseChunkBytes)))) }
                    ?? context.configuration.responseChunkBytes
                let (_, inline) = AsyncBridge<Result<[UInt8]?, any Error>>.start(on: loop) {
                    do { return .success(try await stream.next(maxLength: maxLength)) } catch { return .failure(error) }
                } deliver: { [self] result in
                    if self.applyChunk(exchange, result) { self.pumpResponse() }
                }
                // A chunk produced synchronously is handled in this loop (no recursion, however long the stream).
                guard let inline else { return }
                guard applyChunk(exchange, inline) else { return }
            }
        }
    }

    /// Frames a pulled chunk into the output buffer. Returns false when the exchange is over (stale chunk,
    /// or the connection was aborted); true when the caller should keep pumping.
    private func applyChunk(_ exchange: Exchange, _ result: Result<[UInt8]?, any Error>) -> Bool {
        guard exchange === self.exchange, phase == .exchanging,
              case .stream(let stream, let remaining, let chunked, _) = exchange.writer
        else { return false }
        switch result {
        case .failure(let error):
            // Never end the body cleanly: the client must see a truncated response.
            context.logger.warning("response stream failed, aborting connection",
                                   [("error", .string("\(error)")), ("remote", .string(remoteAddress))])
            abort()
            return false
        case .success(nil):
            if let remaining, remaining > 0 {
                context.logger.warning("response stream ended before its declared length, aborting connection",
                                       [("missing", .int(remaining)), ("remote", .string(remoteAddress))])
                abort()
                return false
            }
            if chunked { output.append(contentsOf: ResponseHead.lastChunk) }
            exchange.writer = .buffered
        case .success(let bytes?):
            if bytes.isEmpty {
                exchange.writer = .stream(stream, remaining: remaining, chunked: chunked, pulling: false)
            } else if let remaining {
                guard Int64(bytes.count) <= remaining else {
                    context.logger.warning("response stream exceeded its declared length, aborting connection",
                                           [("remote", .string(remoteAddress))])
                    stream.cancel()
                    abort()
                    return false
                }
                if output.isEmpty {
                    // Nothing else is queued: send the stream's own array (no copy of every byte into `output`).
                    output = bytes
                    outputOffset = 0
                } else {
                    output.append(contentsOf: bytes)
                }
                exchange.writer = .stream(stream, remaining: remaining - Int64(bytes.count), chunked: false, pulling: false)
            } else {
                if chunked {
                    ResponseHead.appendHex(bytes.count, to: &output)
                    output.append(0x0D)
                    output.append(0x0A)
                }
                output.append(contentsOf: bytes)
                if chunked {
                    output.append(0x0D)
                    output.append(0x0A)
                }
                exchange.writer = .stream(stream, remaining: nil, chunked: chunked, pulling: false)
            }
        }
        return true
    }

    /// Sends buffered output. Returns true when all of it is in the kernel; false when the socket is full
    /// (the write source is armed) or the connection failed (it is closed).
    func flushOutput() -> Bool {
        var progressed = false
        while outputOffset < output.count {
            let n = output.withUnsafeBytes { buffer in
                send(fd, buffer.baseAddress! + outputOffset, buffer.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                outputOffset += n
                progressed = true
                if let exchange {
                    exchange.bytesOut += Int64(n)
                    if exchange.firstByteAt == nil && exchange.responseStarted {
                        exchange.firstByteAt = MonotonicClock.nanoseconds()
                    }
                }
                continue
            }
            let error = errno
            if n < 0 && error == EINTR { continue }
            if n < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
                if !wantWriting { resumeWriting() } else if progressed { setWriteDeadline(active: true) }
                return false
            }
            // EPIPE, ECONNRESET: the client is gone.
            close()
            return false
        }
        // A taken-over stream chunk is dropped, not kept as capacity (idle connections hold no output buffer).
        output.removeAll(keepingCapacity: output.capacity <= 16 * 1024)
        outputOffset = 0
        reportBuffered(0)
        return true
    }

    func handleWritable() {
        switch phase {
        case .exchanging:
            pumpResponse()
        case .closingAfterWrite:
            if flushOutput() { closeGracefully() }
        default:
            suspendWriting()
        }
    }
}
