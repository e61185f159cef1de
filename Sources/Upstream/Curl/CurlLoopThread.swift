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
    private let poll = EpollSet(capacity: 64)

    private let inbox: LoopInbox
    /// The loop thread's id (`pthread_t`), read by `coversCurrentThread` from any thread.
    private let thread = Atomic<UInt>(0)

    // Confined to the loop thread.
    private let guests = GuestTable()
    private(set) var turnTime: UInt64 = MonotonicClock.nanoseconds()

    init() {
        inbox = LoopInbox(wake: { [poll] in poll.wake() })
        // The thread holds the host until it leaves.
        LoopThread.start { self.run() }
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
        let change = guests.watch(descriptor, interest, for: guest)
        poll.apply(change, descriptor, interest, key: UInt64(UInt32(bitPattern: descriptor)))
    }

    func guestDeadlineChanged(_ deadline: UInt64) { guests.deadlineChanged(deadline) }

    // MARK: the loop thread

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        SocketHosts.markCurrentThread(self)
        EpollSet.nameCurrentThread("upstream")
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
            let count = poll.wait(timeoutMillis: block ? timeoutMillis() : 0)
            if block { inbox.awoke() }
            turnTime = MonotonicClock.nanoseconds()
            for index in 0..<count {
                guard let (key, readiness) = poll.event(index) else { continue }
                let fd = Int32(truncatingIfNeeded: key)
                guests.guest(watching: fd)?.socketReady(fd, readiness)
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
}
