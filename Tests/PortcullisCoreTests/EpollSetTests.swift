#if os(Linux)
import Glibc
import PortcullisCore
import Testing

/// The loops' kernel half on real descriptors: a socket pair stands in for a connection.
@Suite struct EpollSetTests {
    /// A connected pair of stream sockets; the test closes both.
    private func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        precondition(made == 0, "socketpair: errno \(errno)")
        return (fds[0], fds[1])
    }

    /// Every event of one wait, wake-ups dropped as the loops drop them.
    private func events(_ poll: EpollSet, timeoutMillis: Int32) -> [(key: UInt64, readiness: SocketReadiness)] {
        let count = poll.wait(timeoutMillis: timeoutMillis)
        return (0..<count).compactMap { poll.event($0) }
    }

    @Test func aWatchedDescriptorReportsItsKeyAndReadiness() {
        let poll = EpollSet(capacity: 8)
        let (near, far) = socketPair()
        defer { _ = close(near); _ = close(far) }
        poll.apply(.add, near, [.read], key: 7 | 1 << 32)
        #expect(events(poll, timeoutMillis: 0).isEmpty)  // nothing to read yet
        var byte: UInt8 = 1
        #expect(write(far, &byte, 1) == 1)
        let ready = events(poll, timeoutMillis: 1000)
        #expect(ready.count == 1)
        #expect(ready.first?.key == 7 | 1 << 32)
        #expect(ready.first?.readiness == [.readable])
        // Asking for writes as well: a socket with room is writable at once.
        poll.apply(.modify, near, [.read, .write], key: 7)
        #expect(events(poll, timeoutMillis: 1000).first?.readiness == [.readable, .writable])
        // Removed: it is silent however ready it is.
        poll.apply(.remove, near, [], key: 7)
        #expect(events(poll, timeoutMillis: 0).isEmpty)
    }

    @Test func aWakeEndsTheWaitAndIsConsumed() {
        let poll = EpollSet(capacity: 8)
        poll.wake()
        poll.wake()
        // The wake-up returns the wait with no event for the caller.
        #expect(poll.wait(timeoutMillis: 1000) == 1)
        #expect(poll.event(0) == nil)
        // Drained: the next wait does not return at once for the same wake-ups.
        #expect(poll.wait(timeoutMillis: 0) == 0)
    }

    @Test func aClosedPeerIsReportedAsFailed() {
        let poll = EpollSet(capacity: 8)
        let (near, far) = socketPair()
        defer { _ = close(near) }
        poll.apply(.add, near, [.read], key: 3)
        _ = close(far)
        let ready = events(poll, timeoutMillis: 1000)
        #expect(ready.count == 1)
        #expect(ready.first?.readiness.contains(.failed) == true)  // EPOLLHUP
    }
}
#endif
