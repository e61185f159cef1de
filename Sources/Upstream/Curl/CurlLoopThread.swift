internal import CCurl
import Glibc
import PortcullisCore
import Synchronization

/// The host of a client's curl multi handle for callers on no event loop of their own — startup, background
/// work (change events, key refreshes), tests, exchanges of the Dispatch driver: one thread that waits in
/// `epoll_wait` on its guest's sockets until the guest's earliest deadline, and runs the jobs other threads hand
/// it (`execute`, an `eventfd` write only when it sleeps).
///
/// Lifetime: the thread holds the host until `stop` (the client's deinit) and its guests have detached (the
/// last transfer finished); then it exits.
final class CurlLoopThread: SocketHost, @unchecked Sendable {
    private let epollFD: Int32
    private let wakeFD: Int32
    private static let wakeKey = UInt64.max

    private let inbox: LoopInbox
    /// The loop thread's id (`pthread_t`), read by `coversCurrentThread` from any thread.
    private let thread = Atomic<UInt>(0)

    // Confined to the loop thread.
    private let guests = GuestTable()
    private(set) var turnTime: UInt64 = MonotonicClock.nanoseconds()

    init() {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        precondition(epollFD >= 0 && wakeFD >= 0, "cannot create the upstream event loop: errno \(errno)")
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeKey))
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0, "cannot watch the wake-up descriptor")
        inbox = LoopInbox(wake: { [wakeFD] in _ = eventfd_write(wakeFD, 1) })
        // The thread holds the host until it leaves.
        LoopThread.start { self.run() }
    }

    deinit {
        _ = Glibc.close(epollFD)
        _ = Glibc.close(wakeFD)
    }

    // MARK: any thread

    func execute(_ job: @escaping @Sendable () -> Void) {
        inbox.execute(job)
    }

    /// Lets the thread exit once its guests have detached.
    func stop() {
        inbox.requestStop()
    }

    var coversCurrentThread: Bool { pthread_equal(pthread_self(), pthread_t(thread.load(ordering: .relaxed))) != 0 }

    // MARK: SocketHost (loop thread)

    func attach(_ guest: any SocketGuest) { guests.attach(guest) }

    func detach(_ guest: any SocketGuest) { guests.detach(guest) }

    func watch(_ descriptor: Int32, _ interest: SocketInterest, for guest: any SocketGuest) {
        let operation: Int32
        switch guests.watch(descriptor, interest, for: guest) {
        case .none: return
        case .add: operation = EPOLL_CTL_ADD
        case .modify: operation = EPOLL_CTL_MOD
        case .remove:
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, descriptor, nil)
            return
        }
        let events =
            (interest.contains(.read) ? EPOLLIN.rawValue : 0) | (interest.contains(.write) ? EPOLLOUT.rawValue : 0)
        var event = epoll_event(events: events, data: epoll_data_t(u64: UInt64(UInt32(bitPattern: descriptor))))
        _ = epoll_ctl(epollFD, operation, descriptor, &event)
    }

    func guestDeadlineChanged(_ deadline: UInt64) { guests.deadlineChanged(deadline) }

    // MARK: the loop thread

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        SocketHosts.markCurrentThread(self)
        pc_curl_name_loop_thread("upstream")
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        var jobs: [@Sendable () -> Void] = []
        var tasks: [UnownedJob] = []  // none: nothing resumes tasks here
        while true {
            inbox.take(&jobs, &tasks)
            for job in jobs { job() }
            jobs.removeAll(keepingCapacity: jobs.capacity <= 1024)
            turnTime = MonotonicClock.nanoseconds()
            guests.runDeadlines(now: turnTime)
            guests.endTurns()
            let (block, exit) = inbox.prepareToSleep(idle: guests.isEmpty)
            if exit { break }
            let count = epoll_wait(epollFD, events, Int32(capacity), block ? timeoutMillis() : 0)
            if block { inbox.awoke() }
            turnTime = MonotonicClock.nanoseconds()
            for index in 0..<max(0, Int(count)) {
                let event = events[index]
                if event.data.u64 == Self.wakeKey {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeFD, &value)
                    continue
                }
                let fd = Int32(truncatingIfNeeded: event.data.u64)
                guests.guest(watching: fd)?.socketReady(fd, Self.readiness(event.events))
            }
            guests.endTurns()
        }
    }

    /// Milliseconds until the earliest deadline, rounded up (-1: none).
    private func timeoutMillis() -> Int32 {
        let next = guests.firesAt
        guard next != .max else { return -1 }
        let now = MonotonicClock.nanoseconds()
        guard next > now else { return 0 }
        return Int32(clamping: (next - now + 999_999) / 1_000_000)
    }

    private static func readiness(_ events: UInt32) -> SocketReadiness {
        var readiness: SocketReadiness = []
        if events & EPOLLIN.rawValue != 0 { readiness.insert(.readable) }
        if events & EPOLLOUT.rawValue != 0 { readiness.insert(.writable) }
        if events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readiness.insert(.failed) }
        if events & EPOLLERR.rawValue != 0 { readiness.insert(.errorReported) }
        return readiness
    }
}
