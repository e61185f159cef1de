import Dispatch
import PortcullisCore
import Synchronization

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

/// The running server: its loops, acceptor and connection registry, shared by `HTTPServer` and its
/// connections.
///
/// Threading: the registry is behind a mutex because connections enter it from the acceptor's loop and leave
/// it from their own loops' threads; everything else is immutable after `start` (hence `@unchecked Sendable`).
final class ServerCore: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let logger: Logger
    let statistics = ServerStatistics()
    /// The `Date:` line every response carries, shared by all connections.
    let dateHeader = DateHeaderCache()
    /// The timeouts in nanoseconds, converted once (read on every request).
    let timeouts: ConnectionTimeouts
    /// The process's loops of the configured driver (one per core); connections are spread over them.
    let group: EventLoopGroup

    private struct Registry {
        var connections: [ObjectIdentifier: HTTPConnection] = [:]
        var acceptor: Acceptor?
    }
    private let registry = Mutex(Registry())

    /// `group` nil: the configured driver's group (the caller has checked that it exists).
    init(
        configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger,
        group: EventLoopGroup? = nil
    ) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
        timeouts = ConnectionTimeouts(configuration.timeouts)
        self.group = group ?? EventLoopGroup.shared(configuration.eventLoop) ?? EventLoopGroup.shared(.dispatch)!
    }

    var openConnections: Int { registry.withLock { $0.connections.count } }

    func connectionSnapshot() -> [HTTPConnection] { registry.withLock { Array($0.connections.values) } }

    // MARK: - Listening

    /// Starts accepting on an already bound and listening descriptor, from the group's first loop.
    func startAccepting(listenFD fd: Int32) {
        let acceptor = Acceptor(listener: fd, core: self, loop: group.loops[0])
        registry.withLock { $0.acceptor = acceptor }
        acceptor.loop.execute { acceptor.start() }
    }

    /// Stops accepting and returns once the listening socket is closed (new connections are refused).
    func stopAccepting() async {
        guard let acceptor = takeAcceptor() else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            acceptor.stop { continuation.resume() }
        }
    }

    /// `stopAccepting` for synchronous callers: waits for the loop to close the listener (a few microseconds
    /// unless the loop is busy; at most a second), except on that loop itself, which cannot wait for itself.
    func stopAcceptingNow() {
        guard let acceptor = takeAcceptor() else { return }
        guard !acceptor.loop.coversCurrentThread else { return acceptor.stop {} }
        let closed = DispatchSemaphore(value: 0)
        acceptor.stop { closed.signal() }
        _ = closed.wait(timeout: .now() + 1)
    }

    private func takeAcceptor() -> Acceptor? {
        registry.withLock { registry -> Acceptor? in
            defer { registry.acceptor = nil }
            return registry.acceptor
        }
    }

    /// Registers a just-accepted descriptor as a connection served by `loop`. Called by the acceptor.
    func adopt(fd: Int32, remoteAddress: String, loop: any EventLoop) {
        var session: (any TLSSession)?
        if let tls = configuration.tls {
            session = tls.makeSession(descriptor: fd)
            if session == nil {
                logger.warning("cannot start a TLS session, closing connection", [("remote", .string(remoteAddress))])
                Posix.close(fd)
                return
            }
        }
        let connection = HTTPConnection(
            fd: fd, remoteAddress: remoteAddress, context: self, loop: loop, tls: session.map(TLSChannel.init))
        registry.withLock { $0.connections[ObjectIdentifier(connection)] = connection }
        statistics.acceptedConnections.add(1, ordering: .relaxed)
        loop.execute { connection.start() }
    }

    /// Called on the connection's loop once its descriptor is closed.
    func connectionClosed(_ connection: HTTPConnection) {
        let (remaining, acceptor) = registry.withLock { registry -> (Int, Acceptor?) in
            registry.connections[ObjectIdentifier(connection)] = nil
            return (registry.connections.count, registry.acceptor)
        }
        if remaining < configuration.maxConnections, let acceptor, acceptor.pausedAtLimit.load(ordering: .relaxed) {
            acceptor.loop.execute { acceptor.connectionsBelowLimit() }
        }
    }
}
