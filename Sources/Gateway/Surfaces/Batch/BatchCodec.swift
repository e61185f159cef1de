import HTTPServer
import PortcullisCore
import Service

/// The wire format of Cloud Storage's batch endpoint: a `multipart/mixed` body whose parts are
/// `application/http` requests (`METHOD TARGET HTTP/1.1`, headers, a blank line, a body), answered by a
/// `multipart/mixed` body whose parts are the HTTP responses, in the same order, each with
/// `Content-ID: <response-ID>` for a request part's `Content-ID: <ID>`.
///
/// Pure byte work on a collected body (a batch is at most `maxParts` small JSON calls); line ends may be CRLF or
/// bare LF, as the email-package writers of Google's Python clients produce.
enum BatchCodec {
    /// GCS's limit.
    static let maxParts = 100

    /// One request of a batch.
    struct Part {
        var contentID: String?
        var method: String
        /// The origin-form target (`/storage/v1/…?…`); an absolute URL's scheme and authority are dropped.
        var target: String
        var headers: [(name: String, value: String)]
        var body: [UInt8]
    }

    /// One answered part.
    struct Answer {
        var contentID: String?
        var status: Int
        var reason: String
        var headers: [(name: String, value: String)]
        var body: [UInt8]
    }

    /// The `boundary` of a `multipart/mixed` Content-Type (quotes removed), or nil.
    static func boundary(contentType: String) -> String? {
        MultipartReader.boundary(contentType: contentType, of: "multipart/mixed")
    }

    /// The requests of a batch body, in order.
    static func parse(_ body: [UInt8], boundary: String) throws(ServiceError) -> [Part] {
        let delimiter = Array("--\(boundary)".utf8)
        var starts: [Int] = []
        var index = 0
        // Delimiters sit at the start of a line.
        while let found = find(delimiter, in: body, from: index) {
            if found == 0 || body[found - 1] == 0x0A { starts.append(found) }
            index = found + delimiter.count
        }
        guard let first = starts.first else { throw .badRequest("The batch body has no part.") }
        var parts: [Part] = []
        var closed = false
        for (n, start) in starts.enumerated() {
            let afterDelimiter = start + delimiter.count
            if body[afterDelimiter...].starts(with: "--".utf8) {
                closed = true
                break
            }
            guard n + 1 < starts.count else { break }
            // Skip the rest of the delimiter line; the part ends at the line end before the next delimiter.
            guard let lineEnd = body[afterDelimiter...].firstIndex(of: 0x0A) else { break }
            var end = starts[n + 1] - 1
            if end > lineEnd, body[end - 1] == 0x0D { end -= 1 }
            guard parts.count < maxParts else {
                throw .badRequest("A batch holds at most \(maxParts) requests.")
            }
            parts.append(try part(body[(lineEnd + 1)..<max(end, lineEnd + 1)]))
        }
        guard closed, first >= 0 else { throw .badRequest("The batch body is not closed by its final boundary.") }
        guard !parts.isEmpty else { throw .badRequest("The batch body has no part.") }
        return parts
    }

    /// One part: its MIME headers, then the HTTP request it carries.
    private static func part(_ bytes: ArraySlice<UInt8>) throws(ServiceError) -> Part {
        let (mimeHeaders, http) = head(bytes, skippingBlankLines: false)
        var contentID: String?
        for line in mimeHeaders {
            guard let (name, value) = line.bytesCut(at: UInt8(ascii: ":")) else { continue }
            if name.trimmingSpaces().bytesEqualIgnoringASCIICase("Content-ID") {
                contentID = value.trimmingSpaces()
            }
        }
        let (lines, rest) = head(http, skippingBlankLines: true)
        guard let requestLine = lines.first else { throw .badRequest("A batch part holds no HTTP request.") }
        let words = requestLine.bytesSplit(separator: UInt8(ascii: " "))
        guard words.count == 3, words[2].bytesHasPrefix("HTTP/1.") else {
            throw .badRequest("A batch part's request line is not METHOD TARGET HTTP/1.1.")
        }
        var target = words[1]
        for scheme in ["http://", "https://"] where target.lowercased().bytesHasPrefix(scheme) {
            let afterScheme = target.utf8.dropFirst(scheme.utf8.count)
            target =
                afterScheme.firstIndex(of: UInt8(ascii: "/")).map {
                    String(decoding: afterScheme[$0...], as: UTF8.self)
                } ?? "/"
        }
        guard target.bytesHasPrefix("/") else { throw .badRequest("A batch part's target must be a path.") }
        var headers: [(name: String, value: String)] = []
        var length: Int?
        for line in lines.dropFirst() {
            guard let (rawName, rawValue) = line.bytesCut(at: UInt8(ascii: ":")) else {
                throw .badRequest("A batch part's header is malformed.")
            }
            let name = rawName.trimmingSpaces()
            let value = rawValue.trimmingSpaces()
            guard !name.isEmpty, !value.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 }) else {
                throw .badRequest("A batch part's header is malformed.")
            }
            if name.bytesEqualIgnoringASCIICase("Content-Length") {
                guard let n = Int(value), n >= 0 else { throw .badRequest("A batch part's Content-Length is invalid.") }
                length = n
            }
            headers.append((name, value))
        }
        var body = Array(rest)
        if let length {
            guard length <= body.count else { throw .badRequest("A batch part's body is shorter than its length.") }
            body = Array(body.prefix(length))
        }
        return Part(
            contentID: contentID, method: String(words[0]), target: target, headers: headers, body: body)
    }

    /// The header lines up to the first empty line (CRLF or LF ends), and what follows it. A part with no MIME
    /// headers starts with its empty line; an HTTP request may be preceded by blank lines (`skippingBlankLines`).
    private static func head(_ bytes: ArraySlice<UInt8>, skippingBlankLines: Bool) -> ([Substring], ArraySlice<UInt8>) {
        var lines: [Substring] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard let newline = bytes[index...].firstIndex(of: 0x0A) else {
                let line = String(decoding: bytes[index...], as: UTF8.self)
                if !line.isEmpty { lines.append(Substring(line)) }
                return (lines, [])
            }
            var lineEnd = newline
            if lineEnd > index, bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            let line = bytes[index..<lineEnd]
            index = newline + 1
            if line.isEmpty {
                if lines.isEmpty, skippingBlankLines { continue }
                return (lines, bytes[index...])
            }
            lines.append(Substring(String(decoding: line, as: UTF8.self)))
        }
        return (lines, [])
    }

    /// The `multipart/mixed` answer body.
    static func render(_ answers: [Answer], boundary: String) -> [UInt8] {
        var out: [UInt8] = []
        for answer in answers {
            out.append(contentsOf: "--\(boundary)\r\nContent-Type: application/http\r\n".utf8)
            if let id = answer.contentID {
                let bare = id.bytesHasPrefix("<") && id.bytesHasSuffix(">") ? String(id.dropFirst().dropLast()) : id
                out.append(contentsOf: "Content-ID: <response-\(bare)>\r\n".utf8)
            }
            out.append(contentsOf: "\r\nHTTP/1.1 \(answer.status) \(answer.reason)\r\n".utf8)
            for (name, value) in answer.headers {
                out.append(contentsOf: "\(name): \(value)\r\n".utf8)
            }
            out.append(contentsOf: "Content-Length: \(answer.body.count)\r\n\r\n".utf8)
            out.append(contentsOf: answer.body)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "--\(boundary)--\r\n".utf8)
        return out
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
