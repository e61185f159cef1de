import Foundation
import Gateway
import HTTPServer
import PortcullisCore
import Testing

/// A minimal blocking HTTP/1.1 client over a loopback socket: one request, `Connection: close`, whole response.
enum LoopbackHTTP {
    struct Response {
        let status: Int
        let headers: [String: String]
        let body: String
    }

    /// Runs the blocking exchange on a Dispatch thread: blocking Swift's cooperative pool (two threads here)
    /// would starve the server's own tasks.
    static func send(
        port: Int, _ method: String, _ target: String, headers: [String: String] = [:],
        body: String = ""
    ) async throws -> Response {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try sendBlocking(port: port, method, target, headers: headers, body: body)
                    })
            }
        }
    }

    static func sendBlocking(
        port: Int, _ method: String, _ target: String, headers: [String: String],
        body: String = ""
    ) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { request += "Content-Length: \(body.utf8.count)\r\n" }
        request += "\r\n" + body
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            received.append(contentsOf: buffer[..<n])
            if isComplete(received) { break }
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw POSIXError(.EBADMSG) }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var headerMap: [String: String] = [:]
        for line in lines.dropFirst() {
            if let colon = line.firstIndex(of: ":") {
                headerMap[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
        }
        return Response(status: status, headers: headerMap, body: String(text[split.upperBound...]))
    }
}

extension LoopbackHTTP {
    /// Whether a Content-Length response is complete (error responses may linger before the server closes).
    static func isComplete(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<split.lowerBound].lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else {
            return false
        }
        return text.utf8.count - text[..<split.upperBound].utf8.count >= length
    }
}

/// GatewayResponder behind the real HTTPServer on 127.0.0.1:0.
@Suite struct OpsServerTests {
    final class Running: Sendable {
        let server: HTTPServer
        let port: Int
        let readiness: Readiness
        let captured = CapturedLines()

        init(surfaces: [any APISurface] = [EchoAPI()]) throws {
            let registry = MetricsRegistry()
            readiness = Readiness(probeInterval: .zero)
            let metrics = HTTPMetrics(registry: registry)
            let responder = try GatewayResponder(
                ops: OpsEndpoints(readiness: readiness, registry: registry), surfaces: surfaces,
                authentication: PermissiveAuthentication(), metrics: metrics,
                accessLog: AccessLog(format: .json, output: captured.append))
            server = HTTPServer(
                configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
                responder: responder, logger: .disabled)
            let server = self.server
            metrics.trackOpenConnections { server.openConnections }
            port = try server.start()
        }

        func send(_ method: String, _ target: String, headers: [String: String] = [:]) async throws
            -> LoopbackHTTP.Response
        {
            try await LoopbackHTTP.send(port: port, method, target, headers: headers)
        }

        deinit { server.stop() }
    }

    @Test func opsEndpointsOverASocket() async throws {
        let running = try Running()
        let health = try await running.send("GET", "/healthz")
        #expect(health.status == 200 && health.body == #"{"status":"ok"}"#)
        #expect(try await running.send("GET", "/readyz").status == 503)
        running.readiness.markServing()
        #expect(try await running.send("GET", "/readyz").status == 200)
        _ = try await running.send("GET", "/v0/b/bkt/o/file")
        let metrics = try await running.send("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(metrics.body.contains(#"portcullis_http_requests_total{route="/healthz",method="GET",status="200"} 1"#))
        #expect(
            metrics.body.contains(
                #"portcullis_http_requests_total{route="/v0/b/{bucket}/o/{object}",method="GET",status="200"} 1"#))
        #expect(metrics.body.contains("# TYPE portcullis_open_connections gauge\nportcullis_open_connections "))
        #expect(!metrics.body.contains("portcullis_open_connections 0\n"))
        running.readiness.markDraining()
        #expect(try await running.send("GET", "/readyz").status == 503)
    }

    @Test func notFoundAndMethodNotAllowed() async throws {
        let running = try Running()
        let missing = try await running.send("GET", "/nothing/here")
        #expect(missing.status == 404)
        #expect(missing.body.hasPrefix(#"{"error":{"code":404,"#))
        let wrong = try await running.send("DELETE", "/healthz")
        #expect(wrong.status == 405)
        #expect(wrong.headers["allow"] == "GET, HEAD")
    }

    @Test func requestIDEchoAndAccessLog() async throws {
        let running = try Running()
        let echoed = try await running.send(
            "GET", "/v0/b/bkt/o/file?token=secret",
            headers: [
                "X-Request-Id": "trace-me.1",
                "Authorization": "Bearer secret",
            ])
        #expect(echoed.status == 200 && echoed.body == "u1")
        #expect(echoed.headers["x-request-id"] == "trace-me.1")
        let generated = try await running.send("GET", "/nothing", headers: ["X-Request-Id": "bad id!"])
        #expect(generated.headers["x-request-id"].map { $0 != "bad id!" && !$0.isEmpty } == true)
        // The log line is written when the exchange completes; poll briefly for it.
        let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
        while running.captured.all.count < 2 && MonotonicClock.nanoseconds() < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        let log = running.captured.joined
        #expect(log.contains(#""request_id":"trace-me.1""#))
        #expect(log.contains(#""status":200"#) && log.contains(#""status":404"#))
        #expect(!log.contains("secret"))
    }
}
