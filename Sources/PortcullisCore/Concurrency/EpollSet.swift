#if os(Linux)
import CEpoll
import Glibc

/// The kernel half of a loop thread of ours — an epoll set and the `eventfd` that wakes its wait — shared by the
/// HTTP loops and an upstream client's own thread, so the epoll calls and their flag mapping live in one place.
///
/// Each watched descriptor carries a 64-bit key of its owner's choosing (the HTTP loop tags a guest's sockets
/// apart from its channels'); `wakeKey` is reserved. Everything but `wake` is for the loop thread only.
public final class EpollSet: @unchecked Sendable {
    /// The key of the wake-up descriptor; `event(_:)` consumes its events.
    public static let wakeKey = UInt64.max

    private let epollFD: Int32
    private let wakeFD: Int32
    private let events: UnsafeMutablePointer<epoll_event>
    private let capacity: Int32

    /// `capacity`: the most events one `wait` returns.
    public init(capacity: Int) {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        precondition(epollFD >= 0 && wakeFD >= 0, "cannot create an event loop: errno \(errno)")
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeKey))
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0, "cannot watch the wake-up descriptor")
        self.capacity = Int32(capacity)
        events = .allocate(capacity: capacity)
    }

    deinit {
        _ = Glibc.close(epollFD)
        _ = Glibc.close(wakeFD)
        events.deallocate()
    }

    /// Ends the loop thread's `wait` now (or makes its next one return at once). Any thread.
    public func wake() {
        _ = eventfd_write(wakeFD, 1)
    }

    /// Brings `descriptor`'s entry in line with `interest`: `change` says whether it is new, changed or gone.
    public func apply(_ change: GuestTable.Change, _ descriptor: Int32, _ interest: SocketInterest, key: UInt64) {
        let operation: Int32
        switch change {
        case .none: return
        case .add: operation = EPOLL_CTL_ADD
        case .modify: operation = EPOLL_CTL_MOD
        case .remove:
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, descriptor, nil)
            return
        }
        let flags =
            (interest.contains(.read) ? EPOLLIN.rawValue : 0) | (interest.contains(.write) ? EPOLLOUT.rawValue : 0)
        var event = epoll_event(events: flags, data: epoll_data_t(u64: key))
        _ = epoll_ctl(epollFD, operation, descriptor, &event)
    }

    /// Waits at most `timeoutMillis` (-1: no limit, 0: not at all) for readiness; the number of events to read
    /// with `event(_:)`.
    public func wait(timeoutMillis: Int32) -> Int {
        max(0, Int(epoll_wait(epollFD, events, capacity, timeoutMillis)))
    }

    /// The `index`th event of the last `wait`: its key and readiness, or nil for a wake-up (drained here).
    public func event(_ index: Int) -> (key: UInt64, readiness: SocketReadiness)? {
        let event = events[index]
        guard event.data.u64 != Self.wakeKey else {
            var value: eventfd_t = 0
            _ = eventfd_read(wakeFD, &value)
            return nil
        }
        var readiness: SocketReadiness = []
        if event.events & EPOLLIN.rawValue != 0 { readiness.insert(.readable) }
        if event.events & EPOLLOUT.rawValue != 0 { readiness.insert(.writable) }
        if event.events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readiness.insert(.failed) }
        if event.events & EPOLLERR.rawValue != 0 { readiness.insert(.errorReported) }
        return (event.data.u64, readiness)
    }

    /// Names the calling thread (`top -H`, perf and gdb show it; at most 15 bytes are kept).
    public static func nameCurrentThread(_ name: String) {
        pc_name_current_thread(name)
    }
}
#endif
