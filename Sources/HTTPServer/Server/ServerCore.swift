import Dispatch
import Synchronization
import PortcullisCore
#if canImport(Glibc)
import Glibc
#endif

/// Counters the server exposes for tests and metrics; updated with relaxed atomics, and only when a value
/// changes (the hot path of a fully flushed response touches none of them).
final class ServerStatistics: Sendable {
    let bufferedBytes = Atomic<Int>(0)
    let peakConnectionBufferedBytes = Atomic<Int>(0)
    let acceptedConnections = Atomic<Int>(0)
    let acceptBackoffs = Atomic<Int>(0)

    func bufferedBytesChanged(by delta: Int, connectionTotal: Int) {
        bufferedBytes.add(delta, ordering: .relaxed)
        var current = peakConnectionBufferedBytes.load(ordering: .relaxed)
        while connectionTotal > current {
            let (exchanged, original) = peakConnectionBufferedBytes.compareExchange(
                expected: current, desired: connectionTotal, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }
}

/// The running server: listener, accept loop and connection registry, shared by `HTTPServer` and its
/// connections.
///
/// Threading: the listener and its accept source are confined to `acceptQueue`; the registry is behind a
/// mutex because connections leave it from their loops' threads (hence `@unchecked Sendable`).
final class ServerCore: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let logger: Logger
    let statistics = ServerStatistics()
    /// The `Date:` line every response carries, shared by all connections.
    let dateHeader = DateHeaderCache()
    /// The timeouts in nanoseconds, converted once (read on every request).
    let idleNanos, headerReadNanos, bodyReadNanos, writeNanos, lingerNanos: UInt64
    let acceptQueue = DispatchQueue(label: "portcullis.http.accept")
    /// The process's event loops (one thread per core); connections are spread over them round-robin.
    let loops = EventLoop.shared
    private var nextLoop = 0

    private struct Registry {
        var connections: [ObjectIdentifier: HTTPConnection] = [:]
    }
    private let registry = Mutex(Registry())

    // Confined to acceptQueue.
    private var listenFD: Int32 = -1
    private var acceptSource: (any DispatchSourceRead)?
    private var acceptSuspended = false
    private var suspendedForLimit = false
    private var accepting = false
    private var lastBackoffLog: UInt64 = 0

    init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
        let timeouts = configuration.timeouts
        idleNanos = timeouts.idle.nanoseconds
        headerReadNanos = timeouts.headerRead.nanoseconds
        bodyReadNanos = timeouts.bodyRead.nanoseconds
        writeNanos = timeouts.write.nanoseconds
        lingerNanos = timeouts.lingeringClose.nanoseconds
    }

    var openConnections: Int { registry.withLock { $0.connections.count } }

    func connectionSnapshot() -> [HTTPConnection] { registry.withLock { Array($0.connections.values) } }

    // MARK: - Listening

    /// Starts accepting on an already bound and listening descriptor.
    func startAccepting(listenFD fd: Int32) {
        acceptQueue.sync {
            listenFD = fd
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: acceptQueue)
            // Strong on purpose: the core lives while it accepts; `stopAccepting` cancels the source, which
            // releases this handler and the cycle with it.
            source.setEventHandler { [self] in self.acceptConnections() }
            source.setCancelHandler { Glibc.close(fd) }
            acceptSource = source
            accepting = true
            source.activate()
        }
    }

    /// Stops accepting: the listening socket is shut down at once (new connections are refused) and closed.
    func stopAccepting() {
        acceptQueue.sync {
            guard accepting, let source = acceptSource else { return }
            accepting = false
            shutdown(listenFD, Int32(SHUT_RDWR))
            if acceptSuspended { source.resume(); acceptSuspended = false }
            source.cancel()
            acceptSource = nil
        }
    }

    private func suspendAccepting() {
        guard !acceptSuspended, let source = acceptSource else { return }
        acceptSuspended = true
        source.suspend()
    }

    private func resumeAccepting() {
        guard acceptSuspended, accepting, let source = acceptSource else { return }
        acceptSuspended = false
        suspendedForLimit = false
        source.resume()
    }

    private func acceptConnections() {
        for _ in 0..<64 {
            guard accepting else { return }
            if openConnections >= configuration.maxConnections {
                suspendedForLimit = true
                suspendAccepting()
                return
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listenFD, $0, &length) }
            }
            if fd < 0 {
                let error = errno
                switch error {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: stop accepting for a moment, keep serving the others.
                    statistics.acceptBackoffs.add(1, ordering: .relaxed)
                    let now = MonotonicClock.nanoseconds()
                    if now &- lastBackoffLog > 1_000_000_000 {
                        lastBackoffLog = now
                        logger.warning("accept failed, backing off", [("errno", .int(Int64(error)))])
                    }
                    suspendAccepting()
                    acceptQueue.asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in resumeAccepting() }
                    return
                default:
                    logger.error("accept failed", [("errno", .int(Int64(error)))])
                    return
                }
            }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            nextLoop = (nextLoop + 1) % loops.count
            let connection = HTTPConnection(fd: fd, remoteAddress: SocketAddress.describe(storage), context: self,
                                            loop: loops[nextLoop])
            registry.withLock { $0.connections[ObjectIdentifier(connection)] = connection }
            statistics.acceptedConnections.add(1, ordering: .relaxed)
            connection.loop.execute { connection.start() }
        }
    }

    /// Called on the connection's loop once its descriptor is closed.
    func connectionClosed(_ connection: HTTPConnection) {
        let remaining = registry.withLock { registry -> Int in
            registry.connections[ObjectIdentifier(connection)] = nil
            return registry.connections.count
        }
        if remaining < configuration.maxConnections {
            acceptQueue.async { [self] in
                if suspendedForLimit { resumeAccepting() }
            }
        }
    }
}
