#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the parser recognised at the front of its input.
public enum HTTPParserEvent: Sendable {
    /// A complete, validated request head. Body events (if any) and `.end` follow.
    case head(HTTPRequestHead)
    /// Decoded body bytes (chunk framing removed); never empty.
    case body([UInt8])
    /// The end of the current request (after its body, or right after a head without one).
    case end
    /// The request is malformed; the parser stays failed and the connection must be closed.
    case error(HTTPParseError)
}

/// A strict, incremental HTTP/1.1 request parser written as a pure state machine: no I/O, no clock, no
/// allocation beyond the values it emits and a line buffer for lines split across reads.
///
/// Drive it with `parse(_:maxBodyBytes:)`: each call looks at the front of `input` and returns how many bytes
/// it consumed and at most one event. When it returns no event it has consumed all of `input` (keeping a
/// partial line internally) and needs more bytes. The caller decides when to call again, which is how the
/// connection applies backpressure: it stops calling after `.head` until the responder pulls the body, and
/// after `.end` until the response is written (bytes of a pipelined next request stay in its buffer).
///
/// Smuggling defences (each answers 400 and the connection closes): `Content-Length` together with
/// `Transfer-Encoding`, repeated or non-numeric `Content-Length`, `chunked` not last or repeated, invalid or
/// overflowing chunk sizes, a missing CRLF after chunk data, obs-fold, whitespace before the colon, control
/// characters (NUL, bare CR) in values, a bare LF as line end, a malformed request line, method or target,
/// a missing or repeated `Host` on HTTP/1.1. Unsupported transfer codings answer 501, any version other than
/// HTTP/1.0 and HTTP/1.1 (including the HTTP/2 preface) 505.
public struct HTTPRequestParser: Sendable {
    private enum State: Sendable {
        case requestLine
        case headerLines
        case fixedBody(remaining: Int64)
        case chunkSize
        case chunkData(remaining: Int64)
        case chunkDataCR
        case chunkDataLF
        case trailers
        /// The message is complete; `.end` is emitted on the next call.
        case messageDone
        case failed(HTTPParseError)
    }

    public let limits: HTTPParserLimits
    private var state: State = .requestLine
    /// A line that started in an earlier input (without its LF).
    private var lineBuffer: [UInt8] = []
    private var emptyLinesSkipped = 0

    // The head under construction.
    var method = HTTPMethod.get
    var target = ""
    var versionMinor = 1
    var headers = HTTPHeaders()
    var headerBytes = 0
    var headBytes = 0
    var contentLength: Int64?
    var contentLengthCount = 0
    var transferEncodings: [String] = []
    var hostCount = 0
    var authorizationCount = 0
    var connectionClose = false
    var connectionKeepAlive = false
    var expectContinue = false
    var bodyBytesSeen: Int64 = 0
    var trailerBytes = 0
    var trailerCount = 0

    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// True between messages: nothing of a next request has been consumed yet.
    public var isAtMessageBoundary: Bool {
        if case .requestLine = state { return lineBuffer.isEmpty && emptyLinesSkipped == 0 }
        return false
    }

    /// True once the parser has reported an error; it will not recover.
    public var hasFailed: Bool {
        if case .failed = state { return true }
        return false
    }

    /// Consumes bytes from the front of `input` and returns at most one event.
    ///
    /// - Parameter maxBodyBytes: the largest `.body` event to return (the size of the consumer's pull).
    /// - Returns: bytes consumed, and the event or nil when all of `input` was consumed without completing one.
    public mutating func parse(_ input: UnsafeRawBufferPointer, maxBodyBytes: Int = .max)
        -> (consumed: Int, event: HTTPParserEvent?)
    {
        var offset = 0
        while true {
            switch state {
            case .failed(let error):
                return (input.count, .error(error))
            case .messageDone:
                resetMessage()
                return (offset, .end)
            case .fixedBody(let remaining):
                let available = input.count - offset
                guard available > 0 else { return (offset, nil) }
                let n = Int(min(Int64(available), remaining, Int64(max(1, maxBodyBytes))))
                let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: input[offset..<(offset + n)]))
                state = remaining - Int64(n) == 0 ? .messageDone : .fixedBody(remaining: remaining - Int64(n))
                return (offset + n, .body(bytes))
            case .chunkData(let remaining):
                let available = input.count - offset
                guard available > 0 else { return (offset, nil) }
                let n = Int(min(Int64(available), remaining, Int64(max(1, maxBodyBytes))))
                let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: input[offset..<(offset + n)]))
                state = remaining - Int64(n) == 0 ? .chunkDataCR : .chunkData(remaining: remaining - Int64(n))
                return (offset + n, .body(bytes))
            case .chunkDataCR, .chunkDataLF:
                guard offset < input.count else { return (offset, nil) }
                let byte = input[offset]
                offset += 1
                if case .chunkDataCR = state {
                    guard byte == 0x0D else { return fail(.badRequest("missing CRLF after chunk data"), input) }
                    state = .chunkDataLF
                } else {
                    guard byte == 0x0A else { return fail(.badRequest("missing CRLF after chunk data"), input) }
                    state = .chunkSize
                }
            case .requestLine, .headerLines, .chunkSize, .trailers:
                // Line-oriented states: find the LF, then handle the whole line.
                let remaining = input.count - offset
                guard remaining > 0 else { return (offset, nil) }
                let start = input.baseAddress! + offset
                guard let lf = memchr(start, 0x0A, remaining) else {
                    lineBuffer.append(contentsOf: UnsafeRawBufferPointer(start: start, count: remaining))
                    if let error = checkPartialLine() { return fail(error, input) }
                    return (input.count, nil)
                }
                let lineLength = start.distance(to: UnsafeRawPointer(lf))
                offset += lineLength + 1
                let event: HTTPParserEvent?
                if lineBuffer.isEmpty {
                    event = handleLine(UnsafeRawBufferPointer(start: start, count: lineLength))
                } else {
                    lineBuffer.append(contentsOf: UnsafeRawBufferPointer(start: start, count: lineLength))
                    let line = lineBuffer
                    lineBuffer.removeAll(keepingCapacity: false)
                    event = line.withUnsafeBytes { handleLine($0) }
                }
                if let event {
                    if case .error(let error) = event { return fail(error, input) }
                    return (offset, event)
                }
            }
        }
    }

    /// Feeds all of `bytes` and collects every event, for tests and the fuzzer. A connection never does this:
    /// it stops after `.head` and `.end` to apply backpressure.
    public mutating func feed(_ bytes: [UInt8]) -> [HTTPParserEvent] {
        var events: [HTTPParserEvent] = []
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while true {
                let (consumed, event) = parse(UnsafeRawBufferPointer(rebasing: buffer[offset...]))
                offset += consumed
                guard let event else { break }
                events.append(event)
                if case .error = event { break }
            }
        }
        return events
    }

    // MARK: - Lines

    private mutating func fail(_ error: HTTPParseError, _ input: UnsafeRawBufferPointer)
        -> (consumed: Int, event: HTTPParserEvent?)
    {
        state = .failed(error)
        lineBuffer = []
        return (input.count, .error(error))
    }

    /// Enforces the limits on a line that has no LF yet, so an endless line is refused early.
    private func checkPartialLine() -> HTTPParseError? {
        // The buffered part may end with the CR of the CRLF, which the limits do not count.
        let length = lineBuffer.last == 0x0D ? lineBuffer.count - 1 : lineBuffer.count
        switch state {
        case .requestLine: return length > limits.maxRequestLineBytes ? .uriTooLong : nil
        case .headerLines: return headerBytes + length + 2 > limits.maxHeaderBytes ? .headersTooLarge : nil
        case .chunkSize: return length > limits.maxChunkLineBytes ? .badRequest("chunk size line too long") : nil
        case .trailers: return trailerBytes + length + 2 > limits.maxTrailerBytes ? .trailersTooLarge : nil
        default: return nil
        }
    }

    /// Handles one complete line (without its LF). Returns an event, or nil to keep parsing.
    private mutating func handleLine(_ rawLine: UnsafeRawBufferPointer) -> HTTPParserEvent? {
        guard let last = rawLine.last, last == 0x0D else {
            return .error(.badRequest("line not terminated by CRLF"))
        }
        let line = UnsafeRawBufferPointer(rebasing: rawLine.dropLast())
        switch state {
        case .requestLine:
            if line.isEmpty {
                // RFC 9112 §2.2: ignore a few empty lines before a request line.
                emptyLinesSkipped += 1
                return emptyLinesSkipped > 4 ? .error(.badRequest("empty request line")) : nil
            }
            guard line.count <= limits.maxRequestLineBytes else { return .error(.uriTooLong) }
            if let error = parseRequestLine(line) { return .error(error) }
            headBytes = line.count + 2
            state = .headerLines
            return nil
        case .headerLines:
            headerBytes += line.count + 2
            headBytes += line.count + 2
            guard headerBytes <= limits.maxHeaderBytes else { return .error(.headersTooLarge) }
            if line.isEmpty { return finishHead() }
            guard headers.count < limits.maxHeaderFields else { return .error(.tooManyHeaders) }
            guard let (name, value) = parseField(line) else { return .error(fieldError(line)) }
            if let error = noteField(name: name, value: value) { return .error(error) }
            if headers.count == 0 { headers = Self.emptyHead() }
            headers.add(name: name, value: value)
            return nil
        case .chunkSize:
            guard line.count <= limits.maxChunkLineBytes else { return .error(.badRequest("chunk size line too long")) }
            switch parseChunkSize(line) {
            case .failure(let error): return .error(error)
            case .success(let size):
                let (total, overflow) = bodyBytesSeen.addingReportingOverflow(size)
                guard !overflow, total <= limits.maxBodyBytes else { return .error(.bodyTooLarge) }
                bodyBytesSeen = total
                state = size == 0 ? .trailers : .chunkData(remaining: size)
                return nil
            }
        case .trailers:
            trailerBytes += line.count + 2
            guard trailerBytes <= limits.maxTrailerBytes else { return .error(.trailersTooLarge) }
            if line.isEmpty {
                resetMessage()
                return .end
            }
            trailerCount += 1
            guard trailerCount <= limits.maxHeaderFields else { return .error(.trailersTooLarge) }
            guard parseField(line) != nil else { return .error(fieldError(line)) }
            return nil
        default:
            return nil
        }
    }

    /// Decides framing once the head is complete.
    private mutating func finishHead() -> HTTPParserEvent {
        if versionMinor == 1 {
            guard hostCount == 1 else { return .error(.badRequest(hostCount == 0 ? "missing Host" : "repeated Host")) }
        } else if hostCount > 1 {
            return .error(.badRequest("repeated Host"))
        }
        let framing: HTTPBodyFraming
        if !transferEncodings.isEmpty {
            guard contentLengthCount == 0 else { return .error(.badRequest("Content-Length with Transfer-Encoding")) }
            guard versionMinor == 1 else { return .error(.badRequest("Transfer-Encoding on HTTP/1.0")) }
            // Without `chunked` last the body length cannot be determined (RFC 9112 §6.3): 400. With it last,
            // another coding before it is one we cannot decode: 501.
            guard transferEncodings.last == "chunked" else {
                return .error(.badRequest("chunked must be the final transfer coding"))
            }
            if transferEncodings.contains(where: { $0 != "chunked" }) { return .error(.codingNotImplemented) }
            guard transferEncodings.count == 1 else { return .error(.badRequest("chunked applied more than once")) }
            framing = .chunked
        } else if let length = contentLength, length > 0 {
            guard length <= limits.maxBodyBytes else { return .error(.bodyTooLarge) }
            framing = .length(length)
        } else {
            framing = .none
        }
        let head = HTTPRequestHead(
            method: method, target: target, versionMajor: 1, versionMinor: versionMinor, headers: headers,
            framing: framing,
            keepAlive: versionMinor == 1 ? !connectionClose : (connectionKeepAlive && !connectionClose),
            expectsContinue: expectContinue && versionMinor == 1 && framing != .none,
            headBytes: headBytes)
        switch framing {
        case .none: state = .messageDone
        case .length(let length): state = .fixedBody(remaining: length)
        case .chunked: state = .chunkSize
        }
        headers = HTTPHeaders()
        return .head(head)
    }

    // MARK: - Chunked

    private func parseChunkSize(_ line: UnsafeRawBufferPointer) -> Result<Int64, HTTPParseError> {
        var size: Int64 = 0
        var index = 0
        while index < line.count, let digit = HTTPSyntax.hexValue(line[index]) {
            guard size <= (Int64.max - Int64(digit)) / 16 else { return .failure(.badRequest("chunk size overflow")) }
            size = size * 16 + Int64(digit)
            index += 1
        }
        guard index > 0 else { return .failure(.badRequest("invalid chunk size")) }
        // Optional BWS, then extensions, which are ignored (but must not hide control characters).
        var rest = index
        while rest < line.count, line[rest] == 0x20 || line[rest] == 0x09 { rest += 1 }
        if rest < line.count {
            guard line[rest] == 0x3B /* ; */ else { return .failure(.badRequest("invalid chunk size")) }
            for byte in line[rest...] where !HTTPSyntax.isFieldValueByte(byte) {
                return .failure(.badRequest("invalid chunk extension"))
            }
        } else if rest != index {
            return .failure(.badRequest("invalid chunk size"))
        }
        return .success(size)
    }

    /// Fields of a new head: one buffer for every name and value, sized for a typical request with a bearer
    /// token (~1.5 KiB), and a range table for 16 fields, so most heads cost exactly these two allocations.
    private static func emptyHead() -> HTTPHeaders { HTTPHeaders(reservingBytes: 1536, fields: 16) }

    private mutating func resetMessage() {
        state = .requestLine
        emptyLinesSkipped = 0
        method = .get
        target = ""
        versionMinor = 1
        headers = HTTPHeaders()
        headerBytes = 0
        headBytes = 0
        contentLength = nil
        contentLengthCount = 0
        transferEncodings = []
        hostCount = 0
        authorizationCount = 0
        connectionClose = false
        connectionKeepAlive = false
        expectContinue = false
        bodyBytesSeen = 0
        trailerBytes = 0
        trailerCount = 0
    }
}
