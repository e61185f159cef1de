import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A plain HTTP/1.1 server on 127.0.0.1 (port 0) whose answers the test scripts, for server behaviour a real
/// gateway cannot be made to show on demand (a 503 after keeping part of a chunk, an upload finished
/// elsewhere). One request per connection (`Connection: close`), handled in arrival order on one thread; the
/// handler may keep state (it is never called concurrently).
final class ScriptedServer: @unchecked Sendable {
    struct Request {
        let method: String
        let target: String
        /// Header fields by lowercased name.
        let headers: [String: String]
        let body: Data
    }

    struct Response {
        var status: Int
        var headers: [(String, String)] = []
        var body = Data()
    }

    let port: Int
    private let listener: Int32
    private let handler: (Request) -> Response

    init(_ handler: @escaping (Request) -> Response) throws {
        self.handler = handler
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            Glibc.close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Stops accepting: the serving thread's pending or next `accept` fails, and the thread closes the listener.
    /// Closing it here instead would let a serving thread that has not reached `accept` yet (a test that sends
    /// nothing ends before it does) accept on whatever socket the next test opens under the same descriptor
    /// number — and answer that test's requests with this script.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve() {
        defer { Glibc.close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            if let request = read(connection) {
                write(handler(request), to: connection)
            }
            finish(connection)
        }
    }

    /// Closes without losing the answer: closing a socket whose receive buffer still holds bytes (a request
    /// body sent chunked, which this server does not read) makes the kernel send a reset that can discard the
    /// answer before the client reads it. So: end our side, read until the client closes (bounded), then close.
    private func finish(_ connection: Int32) {
        shutdown(connection, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sink = [UInt8](repeating: 0, count: 4096)
        while recv(connection, &sink, sink.count, 0) > 0 {}
        Glibc.close(connection)
    }

    private func read(_ connection: Int32) -> Request? {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        func more() -> Bool {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return false }
            buffer += chunk[0..<count]
            return true
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            guard more() else { return nil }
            headEnd = buffer.indices.dropLast(3).first { buffer[$0..<($0 + 4)].elementsEqual(separator) }
        }
        let lines = String(decoding: buffer[..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        if headers["expect"]?.lowercased() == "100-continue" {
            write(raw: Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), to: connection)
        }
        let bodyStart = headEnd! + 4
        while buffer.count - bodyStart < length {
            guard more() else { return nil }
        }
        return Request(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
            body: Data(buffer[bodyStart..<(bodyStart + length)]))
    }

    private func write(_ response: Response, to connection: Int32) {
        var head =
            "HTTP/1.1 \(response.status) Scripted\r\nContent-Length: \(response.body.count)\r\nConnection: close\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        write(raw: Array((head + "\r\n").utf8) + Array(response.body), to: connection)
    }

    private func write(raw bytes: [UInt8], to connection: Int32) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }
}
