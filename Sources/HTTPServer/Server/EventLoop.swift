import CEpoll
import Synchronization
import PortcullisCore
#if canImport(Glibc)
import Glibc
#endif

/// One thread of our own that waits in `epoll_wait` and runs everything of the connections it owns: their
/// socket readiness, their deadlines, and the jobs other threads hand it (`execute`).
///
/// Why not Dispatch sources: with them every readable event was fetched by Dispatch's manager thread and
/// handed over (an `eventfd` write, a thread switch) and every suspend/resume re-armed the descriptor through
/// that thread again — about half of the CPU of a keep-alive `/healthz` (bench S1) and ~550 bytes of source
/// and handler objects per idle connection (S7). Here a keep-alive request costs one `epoll_wait` (shared by
/// every ready connection), one `read` and one `send` on this thread, and an idle connection costs its
/// table entry.
///
/// Descriptors are registered level-triggered with exactly the interest the connection wants (`EPOLLIN`
/// while it reads, `EPOLLOUT` while a send would block); a connection that wants neither is removed from the
/// set, so a hung-up peer cannot make the loop spin while a responder works. A closed connection's
/// descriptor is closed at the end of the loop turn, never in the middle of one: events of the same
/// `epoll_wait` batch then cannot reach a new connection that reused the number.
///
/// Deadlines: one per loop rather than a timer per connection. `epoll_wait` sleeps until the earliest
/// deadline any connection registered; a sweep lets each connection check its own. Sweeps are at least
/// `coalescing` apart, so a burst of deadlines costs a few sweeps, not one per connection.
///
/// The loops are process-wide, one per core, like Dispatch's global queues: every `HTTPServer` in the
/// process shares them, so starting and stopping servers (tests do it hundreds of times) never starts or
/// strands threads. Everything not behind `inbox` is confined to the loop thread (hence `@unchecked
/// Sendable`).
final class EventLoop: @unchecked Sendable {
    /// One loop per online core, started on first use.
    static let shared: [EventLoop] = {
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        return (0..<cores).map { EventLoop(name: "pc-http-\($0)") }
    }()

    private let epollFD: Int32
    private let wakeFD: Int32
    private static let wakeKey = UInt64.max

    private struct Inbox {
        var jobs: [@Sendable () -> Void] = []
        /// The loop is in (or about to enter) a blocking `epoll_wait`: the next job must wake it.
        var sleeping = false
    }
    private let inbox = Mutex(Inbox())

    // Confined to the loop thread.
    private var connections: [Int32: HTTPConnection] = [:]
    private var closing: [HTTPConnection] = []
    private var firesAt: UInt64 = .max
    private let coalescing: UInt64

    private let name: String

    private init(name: String, coalescing: UInt64 = 10_000_000) {
        self.name = name
        self.coalescing = coalescing
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        precondition(epollFD >= 0 && wakeFD >= 0, "cannot create an event loop: errno \(errno)")
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeKey))
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0, "cannot watch the wake-up descriptor")
        startThread()
    }

    private func startThread() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            Unmanaged<EventLoop>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(result == 0, "cannot start an event loop thread: \(result)")
        pthread_detach(thread)
    }

    // MARK: - Any thread

    /// Runs `job` on the loop thread, after the current turn; wakes the loop if it sleeps.
    func execute(_ job: @escaping @Sendable () -> Void) {
        let wake = inbox.withLock { inbox -> Bool in
            inbox.jobs.append(job)
            guard inbox.sleeping else { return false }
            inbox.sleeping = false
            return true
        }
        if wake { _ = eventfd_write(wakeFD, 1) }
    }

    // MARK: - Loop thread

    /// Starts delivering `connection`'s events (keyed by its descriptor).
    func add(_ connection: HTTPConnection) {
        connections[connection.fd] = connection
    }

    /// Changes what the kernel reports for `fd`: `old` is what is registered now (0: not in the set).
    func setInterest(fd: Int32, from old: UInt32, to new: UInt32) {
        guard old != new else { return }
        var event = epoll_event(events: new, data: epoll_data_t(u64: UInt64(UInt32(bitPattern: fd))))
        let operation = old == 0 ? EPOLL_CTL_ADD : (new == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD)
        _ = epoll_ctl(epollFD, operation, fd, &event)
    }

    /// Stops delivering events to `connection`; its descriptor is closed at the end of this turn and the
    /// server told then (`connectionClosed`), so the open-connection count never runs ahead of the kernel's.
    func remove(_ connection: HTTPConnection) {
        connections[connection.fd] = nil
        closing.append(connection)
    }

    /// A connection's earliest deadline is now `deadline` (monotonic nanoseconds).
    func deadlineChanged(_ deadline: UInt64) {
        if deadline < firesAt { firesAt = deadline }
    }

    private func run() {
        pc_name_current_thread(name)
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        var jobs: [@Sendable () -> Void] = []
        while true {
            runJobs(&jobs)
            finishClosing()
            let block = inbox.withLock { inbox -> Bool in
                guard inbox.jobs.isEmpty else { return false }
                inbox.sleeping = true
                return true
            }
            let count = epoll_wait(epollFD, events, Int32(capacity), block ? timeoutMillis() : 0)
            if block { inbox.withLock { $0.sleeping = false } }
            for index in 0..<max(0, Int(count)) {
                let event = events[index]
                let key = event.data.u64
                if key == Self.wakeKey {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeFD, &value)
                } else if let connection = connections[Int32(truncatingIfNeeded: key)] {
                    connection.handleEvents(event.events)
                }
            }
            if firesAt != .max && MonotonicClock.nanoseconds() >= firesAt { sweep() }
        }
    }

    private func runJobs(_ jobs: inout [@Sendable () -> Void]) {
        inbox.withLock { swap(&$0.jobs, &jobs) }
        guard !jobs.isEmpty else { return }
        for job in jobs { job() }
        jobs.removeAll(keepingCapacity: jobs.capacity <= 1024)
    }

    private func finishClosing() {
        guard !closing.isEmpty else { return }
        let closed = closing
        closing.removeAll()
        for connection in closed { connection.descriptorReleased() }
    }

    /// Milliseconds until the earliest deadline, rounded up (-1: none).
    private func timeoutMillis() -> Int32 {
        guard firesAt != .max else { return -1 }
        let now = MonotonicClock.nanoseconds()
        guard firesAt > now else { return 0 }
        return Int32(clamping: (firesAt - now + 999_999) / 1_000_000)
    }

    private func sweep() {
        let now = MonotonicClock.nanoseconds()
        firesAt = .max
        var next = UInt64.max
        // Iterates a snapshot: a connection that closes while checked removes itself from the live table.
        for connection in connections.values {
            next = min(next, connection.checkDeadlines(now: now))
        }
        // Deadlines set during the sweep went through `deadlineChanged` and may be earlier.
        let coalesced = next == .max ? UInt64.max : max(next, now &+ coalescing)
        firesAt = min(firesAt, coalesced)
    }
}
