import PortcullisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Responses: head rendering, body writing with backpressure, and the end of an exchange.
extension HTTPConnection {
    /// The responder's answer, now on the connection's loop.
    func responseReady(_ exchange: Exchange, _ response: HTTPResponse) {
        exchange.status = response.status
        exchange.onComplete = response.onComplete
        guard case .exchanging(let current) = state, current === exchange else {
            // The connection went away while the responder worked.
            if case .stream(let stream, _) = response.body { stream.cancel() }
            exchange.finish(completed: false, now: loop.now())
            return
        }
        switch exchange.body {
        case .unread(_, invited: false):
            // Answered without reading: the client may never send the body, so do not wait for it.
            exchange.reuse = .close
        case .unread, .pulling, .cancelled:
            if let expected = exchange.bodyExpectedLength,
                expected - exchange.bodyBytesReceived > context.configuration.maxDrainBodyBytes
            {
                exchange.reuse = .close
            }
        case .failed:
            exchange.reuse = .close
        case .complete:
            break
        }
        writeHead(exchange, response)
        pumpResponse(exchange)
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
            exchange.reuse = .close  // HTTP/1.0: the end of the body is the end of the connection
        }

        // A new exchange's buffer: one allocation, not a growth series, and with the array's 32-byte header still
        // within malloc's per-thread cache (requests up to 1,032 bytes): 1,024 bytes took malloc's binned path.
        if exchange.output.bytes.capacity == 0 { exchange.output.bytes.reserveCapacity(960) }
        writeHeadBytes(
            into: &exchange.output.bytes, exchange: exchange, response: response, length: length,
            bodyAllowed: bodyAllowed, chunked: chunked)

        guard bodyAllowed && !isHead else {
            if case .stream(let stream, _) = response.body { stream.cancel() }
            exchange.startSending(.buffered)
            return
        }
        switch response.body {
        case .empty:
            exchange.startSending(.buffered)
        case .bytes(let bytes):
            exchange.output.bytes.append(contentsOf: bytes)
            exchange.startSending(.buffered)
        case .stream(let stream, let declared):
            exchange.startSending(.stream(stream, remaining: declared, chunked: chunked, pulling: false))
        case .file(let region):
            if region.length <= Self.inlineFileBytes && Self.appendFile(region, to: &exchange.output.bytes) {
                exchange.startSending(.buffered)
            } else {
                exchange.startSending(.file(region, offset: region.offset, remaining: region.length))
            }
        }
    }

    private func writeHeadBytes(
        into output: inout [UInt8], exchange: Exchange, response: HTTPResponse,
        length: Int64?, bodyAllowed: Bool, chunked: Bool
    ) {
        if let reason = response.reason {
            output.append(contentsOf: ResponseHead.statusLine(response.status, reason: reason))
        } else {
            output.append(contentsOf: ResponseHead.statusLine(response.status))
        }
        output.append(contentsOf: context.dateHeader.current())
        response.headers.forEachField { name, value in
            if Self.isFramingField(name) { return }
            guard ResponseHead.isSafeField(name: name, value: value) else {
                context.logger.warning(
                    "dropped an unsafe response header field",
                    [("name", .string(String(decoding: name, as: UTF8.self)))])
                return
            }
            output.append(contentsOf: name)
            output.append(0x3A)
            output.append(0x20)
            output.append(contentsOf: value)
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
        output.append(
            contentsOf: exchange.reuse == .close ? ResponseHead.connectionClose : ResponseHead.connectionKeepAlive)
        output.append(0x0D)
        output.append(0x0A)
    }

    /// File regions up to this size are read into the output buffer behind the head and sent with it in one
    /// `send`: for a small object that is one syscall and one TCP segment instead of a `send` of the head and a
    /// `sendfile` of the body (two segments, two wake-ups of the client). The copy of a few KiB costs less than
    /// either (bench S3, 4 KiB objects).
    static let inlineFileBytes: Int64 = 16 * 1024

    /// Appends the whole region to `output`; false (and `output` unchanged) when the file is shorter than the
    /// region or unreadable, so `sendfile` runs and reports it the usual way.
    private static func appendFile(_ region: FileRegion, to output: inout [UInt8]) -> Bool {
        let length = Int(region.length)
        guard length > 0 else { return true }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: length))
        var filled = 0
        while filled < length {
            let n = output.withUnsafeMutableBytes { buffer in
                pread(
                    region.descriptor, buffer.baseAddress! + start + filled, length - filled,
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

    /// Reads the next piece of a file region (at most `responseChunkBytes`) into the empty output buffer, for
    /// a TLS connection; false when the file is shorter than its region or unreadable.
    private func readFileChunk(_ exchange: Exchange, _ region: FileRegion, offset: Int64, remaining: Int64) -> Bool {
        let count = Int(min(remaining, Int64(context.configuration.responseChunkBytes)))
        exchange.output.bytes.removeAll(keepingCapacity: true)
        exchange.output.offset = 0
        exchange.output.bytes.append(contentsOf: repeatElement(0, count: count))
        var filled = 0
        while filled < count {
            let n = exchange.output.bytes.withUnsafeMutableBytes { buffer in
                pread(region.descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled))
            }
            if n > 0 {
                filled += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                if n == 0 {
                    context.logger.warning(
                        "file shorter than its region, aborting response", [("remote", .string(remoteAddress))])
                }
                exchange.output.bytes.removeAll()
                return false
            }
        }
        exchange.advance(.file(region, offset: offset + Int64(count), remaining: remaining - Int64(count)))
        return true
    }

    /// `Content-Length`, `Transfer-Encoding` and `Connection` are the server's to set.
    private static func isFramingField(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 10: return HTTPSyntax.equalsLowercase(name, "connection") || HTTPSyntax.equalsLowercase(name, "keep-alive")
        case 14: return HTTPSyntax.equalsLowercase(name, "content-length")
        case 17: return HTTPSyntax.equalsLowercase(name, "transfer-encoding")
        default: return false
        }
    }

    /// Writes as much of the response as the socket takes; pulls the next stream chunk only once the
    /// previous one is entirely in the kernel, so at most one chunk per connection sits in user space.
    func pumpResponse(_ exchange: Exchange) {
        while true {
            guard case .exchanging(let current) = state, current === exchange else { return }
            if !exchange.output.isEmpty {
                // A response ready in full waits for the end of the loop's batch (see `HTTPConnection`).
                if !exchange.wasHeld, case .sending(.buffered) = exchange.response, loop.sendAtEndOfBatch(self) {
                    held = exchange
                    return
                }
                reportBuffered(exchange.output.pendingCount)
                switch send(&exchange.output, counting: exchange) {
                case .flushed: break
                case .blocked: return
                case .failed: return close()
                }
            }
            guard case .sending(let producer) = exchange.response else { return }
            switch producer {
            case .buffered:
                return exchangeFinished(exchange)
            case .file(let region, let offset, let remaining):
                if remaining == 0 {
                    exchange.advance(.buffered)
                    continue
                }
                if tls != nil {
                    // No `sendfile` under TLS: the file is read a chunk at a time into the output buffer, which
                    // must be sent before the next chunk is read (memory stays one chunk per connection).
                    guard readFileChunk(exchange, region, offset: offset, remaining: remaining) else { return abort() }
                    continue
                }
                let n = Posix.sendFile(
                    to: descriptor, from: region.descriptor, offset: offset,
                    count: Int(min(remaining, 1 << 30)))
                if n > 0 {
                    exchange.bytesOut += Int64(n)
                    if exchange.firstByteAt == nil { exchange.firstByteAt = loop.now() }
                    exchange.advance(.file(region, offset: offset + Int64(n), remaining: remaining - Int64(n)))
                    exchange.output.stallDeadline = .max
                    continue
                }
                let error = errno
                if n < 0 && error == EINTR { continue }
                if n < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
                    if !exchange.output.isStalled { exchange.output.stallDeadline = loop.now() &+ timeouts.write }
                    return
                }
                if n == 0 {
                    context.logger.warning(
                        "file shorter than its region, aborting response",
                        [("remote", .string(remoteAddress))])
                }
                return abort()
            case .stream(let stream, let remaining, let chunked, let pulling):
                if pulling { return }
                exchange.advance(.stream(stream, remaining: remaining, chunked: chunked, pulling: true))
                // With the declared length reached, one more pull must confirm the end of the stream.
                let chunkBytes = context.configuration.responseChunkBytes
                let maxLength = remaining.map { max(1, Int(clamping: min($0, Int64(chunkBytes)))) } ?? chunkBytes
                let (_, inline) = AsyncBridge<ClosureWork<Result<[UInt8]?, any Error>>>.start(on: loop) {
                    do { return .success(try await stream.next(maxLength: maxLength)) } catch { return .failure(error) }
                } deliver: { [self] result in
                    if self.applyChunk(exchange, result) { self.pumpResponse(exchange) }
                    self.settle()
                }
                // A chunk produced synchronously is handled in this loop (no recursion, however long the stream).
                guard let inline, applyChunk(exchange, inline) else { return }
            }
        }
    }

    /// Frames a pulled chunk into the output buffer. Returns false when the exchange is over (stale chunk,
    /// or the connection was aborted); true when the caller should keep pumping.
    private func applyChunk(_ exchange: Exchange, _ result: Result<[UInt8]?, any Error>) -> Bool {
        guard case .exchanging(let current) = state, current === exchange,
            case .sending(.stream(let stream, let remaining, let chunked, _)) = exchange.response
        else { return false }
        switch result {
        case .failure(let error):
            // Never end the body cleanly: the client must see a truncated response.
            context.logger.warning(
                "response stream failed, aborting connection",
                [("error", .string("\(error)")), ("remote", .string(remoteAddress))])
            abort()
            return false
        case .success(nil):
            if let remaining, remaining > 0 {
                context.logger.warning(
                    "response stream ended before its declared length, aborting connection",
                    [("missing", .int(remaining)), ("remote", .string(remoteAddress))])
                abort()
                return false
            }
            if chunked { exchange.output.bytes.append(contentsOf: ResponseHead.lastChunk) }
            exchange.advance(.buffered)
        case .success(let bytes?):
            if bytes.isEmpty {
                exchange.advance(.stream(stream, remaining: remaining, chunked: chunked, pulling: false))
            } else if let remaining {
                guard Int64(bytes.count) <= remaining else {
                    context.logger.warning(
                        "response stream exceeded its declared length, aborting connection",
                        [("remote", .string(remoteAddress))])
                    stream.cancel()
                    abort()
                    return false
                }
                if exchange.output.isEmpty {
                    // Nothing else is queued: send the stream's own array (no copy of every byte into `output`).
                    exchange.output.bytes = bytes
                    exchange.output.offset = 0
                } else {
                    exchange.output.bytes.append(contentsOf: bytes)
                }
                exchange.advance(
                    .stream(stream, remaining: remaining - Int64(bytes.count), chunked: false, pulling: false))
            } else {
                if chunked {
                    ResponseHead.appendHex(bytes.count, to: &exchange.output.bytes)
                    exchange.output.bytes.append(0x0D)
                    exchange.output.bytes.append(0x0A)
                }
                exchange.output.bytes.append(contentsOf: bytes)
                if chunked {
                    exchange.output.bytes.append(0x0D)
                    exchange.output.bytes.append(0x0A)
                }
                exchange.advance(.stream(stream, remaining: nil, chunked: chunked, pulling: false))
            }
        }
        return true
    }

    func handleWritable() {
        switch state {
        case .exchanging(let exchange):
            pumpResponse(exchange)
        case .closingAfterWrite(let response):
            switch send(&response.output, counting: nil) {
            case .flushed: closeGracefully()
            case .blocked: break
            case .failed: close()
            }
        case .readingHead, .drainingBody, .lingering, .closed:
            break
        }
    }
}
