import PortcullisCore
import Synchronization

/// Pre-rendered pieces of response heads, so the hot path only copies bytes.
enum ResponseHead {
    /// `HTTP/1.1 <code> <reason>\r\n` for every code 100…599, rendered once.
    static let statusLines: [[UInt8]] = (0..<600).map { code in
        Array("HTTP/1.1 \(code) \(reasonPhrase(code))\r\n".utf8)
    }

    static func statusLine(_ status: Int) -> [UInt8] {
        (100..<600).contains(status) ? statusLines[status] : Array("HTTP/1.1 \(status) Unknown\r\n".utf8)
    }

    /// `HTTP/1.1 <code> <reason>\r\n` with a reason of the responder's; one that could break the line (a control
    /// character) is replaced by the standard one.
    static func statusLine(_ status: Int, reason: String) -> [UInt8] {
        guard (100..<600).contains(status), !reason.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            return statusLine(status)
        }
        return Array("HTTP/1.1 \(status) \(reason)\r\n".utf8)
    }

    static let connectionClose: [UInt8] = Array("Connection: close\r\n".utf8)
    static let connectionKeepAlive: [UInt8] = Array("Connection: keep-alive\r\n".utf8)
    static let chunked: [UInt8] = Array("Transfer-Encoding: chunked\r\n".utf8)
    static let contentLengthPrefix: [UInt8] = Array("Content-Length: ".utf8)
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 499: "Client Closed Request"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default:
            switch code / 100 {
            case 1: "Informational"
            case 2: "Success"
            case 3: "Redirection"
            case 4: "Client Error"
            default: "Server Error"
            }
        }
    }

    static func appendHex(_ value: Int, to out: inout [UInt8]) {
        let hex: StaticString = "0123456789abcdef"
        var shift = (Int.bitWidth - value.leadingZeroBitCount + 3) / 4 * 4
        if shift == 0 { out.append(0x30); return }
        while shift > 0 {
            shift -= 4
            out.append(hex.utf8Start[(value >> shift) & 0xF])
        }
    }

    /// Whether a responder-supplied field may be written as is: a token name and a value without CR, LF or
    /// NUL (response splitting).
    static func isSafeField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenByte) else { return false }
        return value.allSatisfy { $0 != 0x0D && $0 != 0x0A && $0 != 0x00 }
    }

    /// The JSON error body the server itself answers with: `{"error":{"code":N,"message":"..."}}`.
    static func errorBody(status: Int, message: String) -> [UInt8] {
        var out = Array(#"{"error":{"code":"#.utf8)
        DecimalText.append(Int64(status), to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONValue.encodeString(message, into: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }
}

/// The `Date:` field line, rendered at most once per second and shared by every connection of a server (a
/// per-connection copy cost each idle keep-alive connection ~90 bytes, bench S7). The lock is held for a
/// compare and a retain; contention between the one-per-core event loops is negligible.
final class DateHeaderCache: Sendable {
    private struct Cached {
        var second: Int64 = -1
        var line: [UInt8] = []
    }
    private let cached = Mutex(Cached())

    func current() -> [UInt8] {
        let now = Timestamp.now()
        let nowSecond = now.secondsSinceEpoch
        return cached.withLock { cached in
            if cached.second != nowSecond {
                var line = Array("Date: ".utf8)
                line.reserveCapacity(40)
                now.appendHTTPDate(to: &line)
                line.append(contentsOf: [0x0D, 0x0A])
                cached = Cached(second: nowSecond, line: line)
            }
            return cached.line
        }
    }
}
