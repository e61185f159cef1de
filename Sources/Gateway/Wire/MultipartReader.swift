public import PortcullisCore
public import Service

/// Why a `multipart/related` body was refused (→ 400).
public enum MultipartError: MalformedBody, Sendable, Equatable {
    case badContentType(String)
    case malformed(String)
    case unexpectedPartCount

    public var description: String {
        switch self {
        case .badContentType(let value): "Bad content type. \(value)"
        case .malformed(let what): "Malformed multipart body: \(what)"
        case .unexpectedPartCount: "Unexpected number of parts in request body"
        }
    }
}

/// A streaming reader of a `multipart/related` body (RFC 2046 §5.1) over a `ByteStream`.
///
/// Parts are read in order: `nextPartHeaders()` positions the reader at a part's content, then the content is
/// pulled with `readPartContent(maxLength:)` (or through `partStream`) until the next delimiter. Memory is
/// bounded by one upstream chunk plus the delimiter length, whatever the part size: a delimiter split across
/// chunk edges is found because the last `delimiter.count - 1` bytes are never released before more arrive.
///
/// Concurrency: like every `ByteStream`, a reader has exactly one consumer that never calls it concurrently
/// with itself; only `cancel()` may come from elsewhere and it only forwards to the thread-safe base stream.
/// That contract is why the class is `@unchecked Sendable`.
public final class MultipartReader: @unchecked Sendable {
    private enum State { case preamble, content, afterDelimiter, closed }

    private let base: any ByteStream
    /// `LF--boundary`: the delimiter that ends every part's content. RFC 2046 puts CRLF before it; a bare LF
    /// is accepted too (gcsfs and google-apitools, so gsutil, write LF line ends, and GCS takes them).
    private let delimiter: [UInt8]
    /// Whether a CR right before the delimiter belongs to it (CRLF line ends) or to the content (LF line ends).
    /// Decided per part by the blank line that ends its headers: a writer that ends lines with LF alone does so
    /// before the delimiter too, and content that itself ends in a CR byte must keep it.
    private var crBeforeDelimiter = true
    private var buffer: [UInt8]
    private var head = 0
    /// Absolute buffer index before which no delimiter starts (so searches never rescan).
    private var scannedUntil = 0
    private var eof = false
    private var pulled: Int64 = 0
    private var state = State.preamble
    private static let readSize = 64 * 1024
    private static let maxHeaderBytes = 16 * 1024

    public init(body: any ByteStream, boundary: String) {
        self.base = body
        self.delimiter = Array("\n--\(boundary)".utf8)
        // The first delimiter has no preceding CRLF; pretend it had one so all delimiters look alike.
        self.buffer = [0x0D, 0x0A]
    }

    /// The `boundary` parameter of a `multipart/related` Content-Type (quotes removed), or nil. Single quotes
    /// count as quotes too: google-apitools (gsutil) writes `boundary='…'`, and Cloud Storage accepts it.
    public static func boundary(contentType: String) -> String? {
        boundary(contentType: contentType, of: "multipart/related")
    }

    /// The `boundary` parameter of a Content-Type of the media type `mediaType` (lower case), or nil.
    public static func boundary(contentType: String, of mediaType: String) -> String? {
        // By bytes: `;`, `=` or a quote with a combining mark after it is one `Character` with it.
        let parts = contentType.bytesSplit(separator: UInt8(ascii: ";"))
        guard let type = parts.first, type.trimmingSpaces().lowercased() == mediaType else { return nil }
        for parameter in parts.dropFirst() {
            guard let (name, raw) = parameter.trimmingSpaces().bytesCut(at: UInt8(ascii: "=")),
                name.trimmingSpaces().bytesEqualIgnoringASCIICase("boundary")
            else { continue }
            let value = unquoted(raw.trimmingSpaces())
            guard (1...70).contains(value.utf8.count),
                !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
            else { return nil }
            return value
        }
        return nil
    }

    /// `value` without the quotes around it, when it starts and ends with the same one of `quotes` (compared as
    /// bytes): double or single by default, as a boundary may be quoted.
    static func unquoted(_ value: String, by quotes: [UInt8] = [UInt8(ascii: "\""), UInt8(ascii: "'")]) -> String {
        let bytes = Array(value.utf8)
        guard bytes.count >= 2, let quote = bytes.first, quotes.contains(quote), bytes.last == quote else {
            return value
        }
        return String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
    }

    /// Advances to the next part and returns its header fields, or nil after the closing delimiter.
    /// Must be called after the previous part's content was read to its end.
    public func nextPartHeaders() async throws -> [(name: String, value: String)]? {
        switch state {
        case .preamble:
            while try await readPartContent(maxLength: Self.readSize) != nil {}  // discard the preamble
        case .content:
            throw MultipartError.malformed("part content not consumed")
        case .afterDelimiter:
            break
        case .closed:
            return nil
        }
        try await fill(atLeast: 2)
        guard available >= 2 else { throw MultipartError.malformed("body ends after a delimiter") }
        if buffer[head] == UInt8(ascii: "-"), buffer[head + 1] == UInt8(ascii: "-") {
            head += 2
            state = .closed
            return nil
        }
        // Transport padding, then the CRLF (or LF) that ends the delimiter line.
        while true {
            try await fill(atLeast: 1)
            guard available > 0 else { throw MultipartError.malformed("body ends in a delimiter line") }
            let c = buffer[head]
            guard c == 0x20 || c == 0x09 else { break }
            head += 1
        }
        guard try await readLine().text.isEmpty else { throw MultipartError.malformed("text after a delimiter") }
        var headers: [(name: String, value: String)] = []
        var headerBytes = 0
        while true {
            let (line, endsWithCRLF) = try await readLine()
            headerBytes += line.count + 2
            guard headerBytes <= Self.maxHeaderBytes else { throw MultipartError.malformed("part headers too large") }
            if line.isEmpty {
                crBeforeDelimiter = endsWithCRLF
                break
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw MultipartError.malformed("part header without a colon")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self).trimmingSpaces()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces()
            headers.append((name, value))
        }
        state = .content
        scannedUntil = head
        return headers
    }

    /// The next bytes of the current part's content, or nil once its delimiter is reached (then consumed).
    public func readPartContent(maxLength: Int) async throws -> [UInt8]? {
        guard state == .content || state == .preamble else { return nil }
        while true {
            if let at = findDelimiter() {
                let contentEnd = crBeforeDelimiter && at > head && buffer[at - 1] == 0x0D ? at - 1 : at
                if contentEnd > head {
                    let end = min(contentEnd, head + max(1, maxLength))
                    return take(upTo: end)
                }
                head = at + delimiter.count
                state = .afterDelimiter
                compact()
                return nil
            }
            // Held back: a delimiter that may start in the last bytes, and the CR that may precede it.
            let safeEnd = buffer.count - delimiter.count
            if safeEnd > head {
                return take(upTo: min(safeEnd, head + max(1, maxLength)))
            }
            if eof { throw MultipartError.malformed("closing boundary missing") }
            try await readMore()
        }
    }

    /// Reads the current part's content into memory, refusing more than `limit` bytes (the JSON part).
    public func collectPart(limit: Int) async throws -> [UInt8] {
        var out = [UInt8]()
        while let chunk = try await readPartContent(maxLength: Self.readSize) {
            guard out.count + chunk.count <= limit else { throw ByteStreamError.limitExceeded(limit: Int64(limit)) }
            out.append(contentsOf: chunk)
        }
        return out
    }

    /// The current part's content as a stream. With `lastPart`, reaching the end also requires the closing
    /// delimiter next, so a body with extra parts fails before its consumer sees a clean end (and commits).
    public func partStream(lastPart: Bool) -> any ByteStream { PartStream(reader: self, lastPart: lastPart) }

    public func cancel() { base.cancel() }

    /// Body bytes consumed so far (headers, delimiters and content handed out).
    public var consumedBytes: Int64 { pulled - Int64(buffer.count - head) }

    /// The length of the current part's line breaks (2: CRLF, 1: LF), which its writer puts before the
    /// delimiter that ends the part too.
    public var lineBreakBytes: Int { crBeforeDelimiter ? 2 : 1 }

    // MARK: - buffer

    private var available: Int { buffer.count - head }

    private func take(upTo end: Int) -> [UInt8] {
        let out = Array(buffer[head..<end])
        head = end
        compact()
        return out
    }

    private func compact() {
        if head > Self.readSize, head * 2 > buffer.count {
            buffer.removeFirst(head)
            scannedUntil = max(0, scannedUntil - head)
            head = 0
        }
    }

    private func readMore() async throws {
        guard !eof else { return }
        if let chunk = try await base.next(maxLength: Self.readSize) {
            pulled += Int64(chunk.count)
            buffer.append(contentsOf: chunk)
        } else {
            eof = true
        }
    }

    private func fill(atLeast count: Int) async throws {
        while available < count, !eof { try await readMore() }
    }

    /// The index of the first delimiter at or after `head`, scanning each byte once across calls.
    private func findDelimiter() -> Int? {
        let first = delimiter[0]
        var i = max(head, scannedUntil)
        let last = buffer.count - delimiter.count
        while i <= last {
            if buffer[i] == first {
                var j = 1
                while j < delimiter.count, buffer[i + j] == delimiter[j] { j += 1 }  // identity-ok: bytes
                if j == delimiter.count { scannedUntil = i; return i }
            }
            i += 1
        }
        scannedUntil = max(head, last + 1)
        return nil
    }

    /// The next line without its line break, and whether that break was CRLF (else a bare LF).
    private func readLine() async throws -> (text: ArraySlice<UInt8>, endsWithCRLF: Bool) {
        var from = head
        while true {
            var i = from
            while i < buffer.count {
                if buffer[i] == 0x0A {
                    let crlf = i > head && buffer[i - 1] == 0x0D
                    let line = buffer[head..<(crlf ? i - 1 : i)]
                    head = i + 1
                    return (line, crlf)
                }
                i += 1
            }
            from = max(head, buffer.count)
            guard buffer.count - head <= Self.maxHeaderBytes else {
                throw MultipartError.malformed("part headers too large")
            }
            guard !eof else { throw MultipartError.malformed("body ends inside part headers") }
            try await readMore()
        }
    }

    fileprivate func ensureClosedNext() async throws {
        guard state == .afterDelimiter else { return }
        try await fill(atLeast: 2)
        guard available >= 2, buffer[head] == UInt8(ascii: "-"), buffer[head + 1] == UInt8(ascii: "-") else {
            throw MultipartError.unexpectedPartCount
        }
        head += 2
        state = .closed
    }
}

/// One part's content as a `ByteStream` (see `MultipartReader.partStream`).
private final class PartStream: ByteStream {
    private let reader: MultipartReader
    private let lastPart: Bool

    init(reader: MultipartReader, lastPart: Bool) {
        self.reader = reader
        self.lastPart = lastPart
    }

    var expectedLength: Int64? { nil }

    func next(maxLength: Int) async throws -> [UInt8]? {
        if let chunk = try await reader.readPartContent(maxLength: maxLength) { return chunk }
        if lastPart { try await reader.ensureClosedNext() }
        return nil
    }

    func cancel() { reader.cancel() }
}
