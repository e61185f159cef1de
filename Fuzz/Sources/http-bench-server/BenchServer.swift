import HTTPServer
import PortcullisCore

/// Answers every request with a canned `200 ok`, like nginx's `return 200 'ok'`. With `immediate` it
/// answers on the synchronous fast path (`immediateResponse`), otherwise through the async `respond`.
struct CannedResponder: HTTPResponder {
    static let body: [UInt8] = Array("ok".utf8)
    let immediate: Bool

    func respond(to request: HTTPRequest) async -> HTTPResponse { canned }

    func immediateResponse(to request: HTTPRequest) -> HTTPResponse? { immediate ? canned : nil }

    private var canned: HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: .bytes(Self.body))
    }
}

/// `http-bench-server [port] [async|immediate] [epoll|dispatch]`: serves the canned response on 127.0.0.1
/// until killed, on the given event-loop driver (default: the platform's).
@main
struct BenchServer {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let port = arguments.count > 1 ? Int(arguments[1]) ?? 0 : 0
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(
                host: "127.0.0.1", port: port,
                eventLoop: arguments.count > 3
                    ? EventLoopDriver(rawValue: arguments[3]) ?? .platformDefault : .platformDefault),
            responder: CannedResponder(immediate: arguments.count > 2 && arguments[2] == "immediate"),
            logger: .disabled)
        let bound = try server.start()
        print("listening on 127.0.0.1:\(bound)")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
