public import PortcullisCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one error type of the HTTPServer module: failures to start listening.
public enum HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    case alreadyStarted
    case invalidAddress(String)
    /// The configured event-loop driver does not exist on this platform.
    case eventLoopUnavailable(EventLoopDriver)
    /// A socket call failed: the call and its errno.
    case socket(String, Int32)

    public var description: String {
        switch self {
        case .alreadyStarted: "server already started"
        case .invalidAddress(let address): "invalid listen address \(address)"
        case .eventLoopUnavailable(let driver): "the \(driver) event loop is not available on this platform"
        case .socket(let call, let error): "\(call) failed: \(String(cString: strerror(error)))"
        }
    }
}

/// An HTTP/1.1 server on event loops.
///
/// Each accepted connection is served by one event loop (`EventLoop`, one per core, shared by its connections,
/// so a connection's events never run concurrently) with non-blocking socket I/O (see `HTTPConnection` for
/// the lifecycle and the loop→async bridge); the responder runs in a `Task` per request, in place on the loop
/// while it stays synchronous. The loops come from the configured driver (`EventLoopDriver`: epoll or
/// Dispatch); the listener is a channel of the first loop like any connection. Keep-alive, pipelining
/// (answered in order, one at a time), `Expect: 100-continue`, chunked bodies both ways, request bodies
/// streamed with backpressure, response bodies from bytes, streams, file regions (`sendfile`; small ones read
/// and sent with the head), and the limits and timeouts of `HTTPServerConfiguration`. With `tls` configured,
/// every connection runs a `TLSSession` on its loop (`TLSChannel`): file regions are then read and encrypted a
/// chunk at a time instead of `sendfile`.
///
/// A started server runs until `drain(deadline:)` or `stop()`, even if this object is released.
///
/// Starting the server ignores `SIGPIPE` process-wide: `sendfile` has no `MSG_NOSIGNAL` (nor has OpenSSL's
/// `write(2)` on a TLS socket), and a server must never be killed by a client that hangs up.
public final class HTTPServer: Sendable {
    private let core: ServerCore
    private let started = Mutex(false)

    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger) {
        core = ServerCore(configuration: configuration, responder: responder, logger: logger)
    }

    public var configuration: HTTPServerConfiguration { core.configuration }

    /// The driver this server's connections run on.
    public var eventLoop: EventLoopDriver { core.group.driver }

    /// Binds `host:port`, starts accepting, and returns the bound port (the kernel's choice when the
    /// configured port is 0).
    public func start() throws(HTTPServerError) -> Int {
        let already = started.withLock { started in
            defer { started = true }
            return started
        }
        guard !already else { throw .alreadyStarted }
        guard core.configuration.eventLoop.isAvailable else {
            started.withLock { $0 = false }
            throw .eventLoopUnavailable(core.configuration.eventLoop)
        }
        _ = signal(SIGPIPE, SIG_IGN)
        let listener: (fd: Int32, port: Int)
        do {
            listener = try SocketAddress.listen(
                host: core.configuration.host, port: core.configuration.port, backlog: core.configuration.backlog)
        } catch {
            started.withLock { $0 = false }
            throw error
        }
        core.startAccepting(listenFD: listener.fd)
        core.logger.info(
            "listening",
            [
                ("host", .string(core.configuration.host)), ("port", .int(Int64(listener.port))),
                ("event_loop", .string(core.group.driver.rawValue)),
            ])
        return listener.port
    }

    /// Connections currently open (accepted and not yet closed).
    public var openConnections: Int { core.openConnections }

    /// Response bytes held in user space across all connections right now (the
    /// `portcullis_stream_buffered_bytes` gauge).
    public var bufferedResponseBytes: Int { core.statistics.bufferedBytes.load(ordering: .relaxed) }

    /// The most response bytes any one connection has held in user space at once since start: bounded by
    /// one response head plus one stream chunk (`responseChunkBytes`) with its framing.
    public var peakBufferedResponseBytesPerConnection: Int {
        core.statistics.peakConnectionBufferedBytes.load(ordering: .relaxed)
    }

    /// Connections accepted since start.
    public var acceptedConnections: Int { core.statistics.acceptedConnections.load(ordering: .relaxed) }

    /// Times the accept loop backed off because descriptors or memory ran out.
    public var acceptBackoffs: Int { core.statistics.acceptBackoffs.load(ordering: .relaxed) }

    /// Graceful shutdown: stops accepting (new connections are refused at once), closes idle keep-alive
    /// connections, lets in-flight exchanges finish (their responses say `Connection: close`) until
    /// `deadline` has passed, then force-closes whatever is left. Returns once every connection is closed.
    public func drain(deadline: Duration) async {
        await core.stopAccepting()
        for connection in core.connectionSnapshot() {
            connection.loop.execute { connection.beginDrain() }
        }
        let end = MonotonicClock.nanoseconds() &+ deadline.nanoseconds
        // Polling keeps the wait simple and bounded; 5 ms is far below any useful drain deadline.
        while core.openConnections > 0 && MonotonicClock.nanoseconds() < end {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if core.openConnections > 0 {
            core.logger.warning(
                "drain deadline passed, closing connections", [("open", .int(Int64(core.openConnections)))])
            forceCloseAll()
            let closeEnd = MonotonicClock.nanoseconds() &+ 1_000_000_000
            while core.openConnections > 0 && MonotonicClock.nanoseconds() < closeEnd {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// Immediate shutdown: stops accepting (the listener is closed when this returns) and aborts every
    /// connection (in-flight exchanges report `completed: false`) without waiting for their loops.
    public func stop() {
        core.stopAcceptingNow()
        forceCloseAll()
    }

    private func forceCloseAll() {
        for connection in core.connectionSnapshot() {
            connection.loop.execute { connection.abort() }
        }
    }
}
