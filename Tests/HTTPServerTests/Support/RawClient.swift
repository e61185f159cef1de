import Dispatch
import PortcullisCore
import Synchronization

@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs blocking socket code on a Dispatch thread, never on Swift's cooperative pool (two threads here:
/// blocking them would starve the server's responder tasks).
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// A response as a raw client saw it.
struct RawResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking TCP client that writes literal bytes and parses responses itself, so tests see exactly what
/// went over the wire.
final class RawClient: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, receiveBuffer: Int? = nil, timeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        if let receiveBuffer {
            var size = Int32(receiveBuffer)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: the instance is fully initialised, so `deinit` runs when this init throws and closes
        // the descriptor; closing it here too would close whatever reused the number in between.
        guard result == 0 else { throw TestFailure("connect failed: errno \(errno)") }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { throw TestFailure("send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Sends without blocking until the socket refuses more; returns how many bytes were accepted.
    func sendUntilFull(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            guard n > 0 else { break }
            offset += n
        }
        return offset
    }

    /// Reads more bytes into the buffer; false at EOF or reset.
    @discardableResult
    func fill(max: Int = 65536) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: max)
        var n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
        // A signal (the exit tests' child processes end with SIGCHLD) interrupts a blocked recv: try again.
        while n < 0 && errno == EINTR { n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) } }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 || errno == ECONNRESET { return false }
        throw TestFailure("recv failed: errno \(errno)")
    }

    private func readLine() throws -> String {
        while true {
            if let lf = buffer.firstIndex(of: 0x0A) {
                let line = buffer[..<lf]
                buffer.removeFirst(lf + 1)
                guard line.last == 0x0D else { throw TestFailure("bare LF in response") }
                return String(decoding: line.dropLast(), as: UTF8.self)
            }
            guard try fill() else { throw TestFailure("EOF in response head") }
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw TestFailure("EOF in body after \(buffer.count) of \(count) bytes") }
        }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads one response. `head: true` for responses to HEAD (no body whatever the framing says).
    func readResponse(head: Bool = false) throws -> RawResponse {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
            throw TestFailure("bad status line \(statusLine)")
        }
        var headers: [(String, String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw TestFailure("bad header \(line)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingPrefix(" ").description))
        }
        var response = RawResponse(status: status, headers: headers, body: [])
        if head || status < 200 || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length") {
            response.body = try readExactly(Int(length)!)
        } else if response.header("Transfer-Encoding") == "chunked" {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine, radix: 16) else { throw TestFailure("bad chunk size \(sizeLine)") }
                if size == 0 {
                    while try !readLine().isEmpty {}
                    break
                }
                response.body += try readExactly(size)
                guard try readExactly(2) == [0x0D, 0x0A] else { throw TestFailure("bad chunk end") }
            }
        } else {
            while try fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// True when the server has closed the connection (EOF or reset) with no further bytes.
    func isClosedByPeer() throws -> Bool {
        guard buffer.isEmpty else { return false }
        return try !fill()
    }

    /// Reads until EOF or reset and returns everything that arrived.
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Half-closes or fully closes the socket with a reset (SO_LINGER 0).
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }
}

/// A responder from a closure.
struct ClosureResponder: HTTPResponder {
    let handler: @Sendable (HTTPRequest) async -> HTTPResponse
    func respond(to request: HTTPRequest) async -> HTTPResponse { await handler(request) }
}

/// A responder answering on the synchronous fast path (`immediateResponse`).
struct ImmediateResponder: HTTPResponder {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    func respond(to request: HTTPRequest) async -> HTTPResponse { HTTPResponse(status: 500) }
    func immediateResponse(to request: HTTPRequest) -> HTTPResponse? { handler(request) }
}

/// A server on 127.0.0.1:0 for one test, on the given event-loop driver.
struct TestServer {
    let server: HTTPServer
    let port: Int

    init(
        driver: EventLoopDriver = .platformDefault, configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
    ) throws {
        try self.init(driver: driver, configure: configure, responder: ClosureResponder(handler: handler))
    }

    init(
        driver: EventLoopDriver = .platformDefault, configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        responder: any HTTPResponder
    ) throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, eventLoop: driver)
        configure(&configuration)
        server = HTTPServer(configuration: configuration, responder: responder, logger: .disabled)
        port = try server.start()
    }

    func client(receiveBuffer: Int? = nil) throws -> RawClient {
        try RawClient(port: port, receiveBuffer: receiveBuffer)
    }
}

/// A value set from another thread, awaited by polling with a bound (no fixed sleeps).
final class Box<T: Sendable>: Sendable {
    private let value: Mutex<T?> = Mutex(nil)
    init() {}
    func set(_ v: T) { value.withLock { $0 = v } }
    var current: T? { value.withLock { $0 } }

    /// Polls until set or `timeout` passes.
    func wait(timeout: Double = 3) -> T? {
        let end = MonotonicClock.nanoseconds() + UInt64(timeout * 1e9)
        while MonotonicClock.nanoseconds() < end {
            if let v = current { return v }
            usleep(2000)
        }
        return current
    }
}

/// A stream producing `total` bytes in chunks of `chunk`, counting what it produced, without holding the
/// body in memory. Optionally fails after `failAfter` bytes.
final class CountingStream: ByteStream {
    let total: Int64?
    let chunk: Int
    let failAfter: Int64?
    let produced = Atomic<Int64>(0)
    let cancelled = Atomic<Bool>(false)
    var expectedLength: Int64? { declareLength ? total : nil }
    private let declareLength: Bool

    init(total: Int64?, chunk: Int = 64 * 1024, declareLength: Bool = false, failAfter: Int64? = nil) {
        self.total = total
        self.chunk = chunk
        self.declareLength = declareLength
        self.failAfter = failAfter
    }

    func next(maxLength: Int) async throws -> [UInt8]? {
        if cancelled.load(ordering: .relaxed) { throw ByteStreamError.cancelled }
        let done = produced.load(ordering: .relaxed)
        if let failAfter, done >= failAfter { throw TestFailure("producer failed") }
        let left = total.map { $0 - done } ?? Int64.max
        guard left > 0 else { return nil }
        let n = Int(min(Int64(min(chunk, maxLength)), left))
        produced.add(Int64(n), ordering: .relaxed)
        return [UInt8](repeating: UInt8(truncatingIfNeeded: done / Int64(chunk)), count: n)
    }

    func cancel() { cancelled.store(true, ordering: .relaxed) }
}
