import PortcullisCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The listening socket as a channel of one event loop: accepts connections and spreads them round-robin
/// over the loops of the server's group.
///
/// States (one at a time; each says why the listener is or is not watched):
///
/// | state | listener watched | left when |
/// |---|---|---|
/// | `accepting` | yes | `maxConnections` reached → `atLimit`; out of descriptors/memory → `backingOff` |
/// | `atLimit` | no (the kernel backlog holds new connections) | a connection closes → `accepting` |
/// | `backingOff(until:)` | no | the deadline passes → `accepting` |
/// | `stopped` | no; the descriptor closes once the loop releases it | never |
///
/// Stopping lets the loop release the listener first and closes it only then (which refuses new
/// connections): shutting a listener down while Dispatch still watches it raises a hang-up that races the
/// source's cancellation inside libdispatch (it crashed the process in tests).
///
/// Confined to its loop (hence `@unchecked Sendable`), except `stop`, `pausedAtLimit` and `loop`.
final class Acceptor: EventLoopChannel, @unchecked Sendable {
    enum State: Equatable {
        case accepting
        case atLimit
        case backingOff(until: UInt64)
        case stopped
    }

    let descriptor: Int32
    var registration = ChannelRegistration()
    let loop: any EventLoop
    /// Strong on purpose: a started server runs until stopped even if nothing else holds it.
    private let core: ServerCore
    private var state = State.accepting
    private var nextLoop = 0
    private var lastBackoffLog: UInt64 = 0
    /// Called once the listener is closed (`stop`).
    private var whenClosed: (@Sendable () -> Void)?
    /// Mirrors `state == .atLimit` for other threads, so a closing connection only wakes the acceptor's loop
    /// when the acceptor is actually waiting for it.
    let pausedAtLimit = Atomic<Bool>(false)

    init(listener: Int32, core: ServerCore, loop: any EventLoop) {
        descriptor = listener
        self.core = core
        self.loop = loop
    }

    /// Starts watching the listener. On the loop.
    func start() {
        loop.register(self)
        loop.setInterest(.read, for: self)
    }

    /// Stops accepting. Any thread: the loop lets go of the listener and closes it — from then on new
    /// connections are refused — and then calls `closed` (on the loop).
    func stop(_ closed: @escaping @Sendable () -> Void) {
        loop.execute { [self] in
            guard state != .stopped else { return closed() }
            state = .stopped
            pausedAtLimit.store(false, ordering: .relaxed)
            whenClosed = closed
            loop.deregister(self)
        }
    }

    /// A connection closed below the limit. On the loop.
    func connectionsBelowLimit() {
        guard state == .atLimit else { return }
        resume()
    }

    private func resume() {
        state = .accepting
        pausedAtLimit.store(false, ordering: .relaxed)
        loop.setInterest(.read, for: self)
    }

    // MARK: - EventLoopChannel

    func handleReadiness(_ readiness: Readiness) {
        for _ in 0..<64 {
            guard state == .accepting else { return }
            if core.openConnections >= core.configuration.maxConnections {
                state = .atLimit
                pausedAtLimit.store(true, ordering: .relaxed)
                loop.setInterest([], for: self)
                // A connection that closed between the count and the flag found nothing to wake: look again.
                if core.openConnections < core.configuration.maxConnections { resume() }
                return
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(descriptor, $0, &length) }
            }
            if fd < 0 {
                let error = errno
                switch error {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    backOff(error)
                    return
                default:
                    core.logger.error("accept failed", [("errno", .int(Int64(error)))])
                    return
                }
            }
            Posix.prepareAccepted(fd)
            let loops = core.group.loops
            nextLoop = (nextLoop + 1) % loops.count
            core.adopt(fd: fd, remoteAddress: SocketAddress.describe(storage), loop: loops[nextLoop])
        }
    }

    /// Out of descriptors or memory: stop watching for a moment, keep serving the open connections.
    private func backOff(_ error: Int32) {
        core.statistics.acceptBackoffs.add(1, ordering: .relaxed)
        let now = loop.now()
        if now &- lastBackoffLog > 1_000_000_000 {
            lastBackoffLog = now
            core.logger.warning("accept failed, backing off", [("errno", .int(Int64(error)))])
        }
        let until = now &+ 100_000_000
        state = .backingOff(until: until)
        loop.setInterest([], for: self)
        loop.deadlineChanged(until)
    }

    func checkDeadlines(now: UInt64) -> UInt64 {
        guard case .backingOff(let until) = state else { return .max }
        guard now >= until else { return until }
        resume()
        return .max
    }

    func descriptorReleased() {
        Posix.close(descriptor)
        whenClosed?()
        whenClosed = nil
    }
}
