#if os(Linux)
import Glibc
import Synchronization
import PortcullisCore

/// The epoll driver of `EventLoop`: one thread of our own that waits in `epoll_wait` and runs everything of
/// the channels registered with it — their socket readiness, their deadlines, and the jobs other threads hand
/// it (`execute`). The default on Linux.
///
/// Why it exists beside the Dispatch driver: with Dispatch sources every readable event is fetched by
/// Dispatch's manager thread and handed over (an `eventfd` write, a thread switch), and every suspend/resume
/// re-arms the descriptor through that thread again — about half of the CPU of a keep-alive `/healthz`
/// (bench S1) and ~550 bytes of source and handler objects per idle connection (S7). Here a keep-alive
/// request costs one `epoll_wait` (shared by every ready connection), one `read` and one `send` on this
/// thread, and an idle connection costs its table entry.
///
/// Descriptors are registered level-triggered with the interest the channel wants, except that a read it drops
/// stays in the set until it brings an event (`ParkedRead`); a channel that wants neither direction leaves the
/// set then. The channel hears only the readiness it asked for. A deregistered channel's `descriptorReleased`
/// runs at the end of the loop turn, never in the middle of one: events of the same `epoll_wait` batch then
/// cannot reach a new channel that reused the descriptor number.
///
/// Held output: connections hand the responses a batch produced to `sendAtEndOfBatch`, and they are sent when
/// the batch's readiness (or a run of handed-over jobs) is handled — one wake-up of a client thread for the
/// batch instead of one per response (bench/NOTES.md, "Held output", has what it saves).
///
/// Deadlines: `epoll_wait` sleeps until the earliest deadline any channel registered; a sweep lets each
/// channel check its own. Sweeps are at least `coalescing` apart, so a burst of deadlines costs a few
/// sweeps, not one per connection.
///
/// Guests (`SocketHost`): the upstream client's curl multi handle runs on the loop whose exchange started the
/// transfer, with its sockets in the same epoll set (tagged apart from the channels'), its deadlines run on time
/// after each batch, and its closed sockets released when the batch is over. A proxied request then never leaves
/// its connection's thread.
///
/// Everything not behind `inbox` is confined to the loop thread (hence `@unchecked Sendable`).
final class EpollEventLoop: EventLoop, TaskExecutor, SocketHost, @unchecked Sendable {
    private let poll = EpollSet(capacity: 256)
    /// Set in the epoll data of a guest's socket (a channel's is its bare descriptor).
    private static let guestTag: UInt64 = 1 << 32

    private let inbox: LoopInbox
    /// The loop thread's id (`pthread_t`), read by `coversCurrentThread` from any thread.
    private let thread = Atomic<UInt>(0)

    // Confined to the loop thread.
    private var channels: [Int32: any EventLoopChannel] = [:]
    private var released: [any EventLoopChannel] = []
    private var firesAt: UInt64 = .max
    private let coalescing: UInt64
    /// Jobs for the end of the current turn (`atEndOfTurn`).
    private var turnEnd: [@Sendable () -> Void] = []
    /// Channels whose output waits for the end of the batch (`sendAtEndOfBatch`).
    private let held = HeldOutput()
    private let guests = GuestTable()
    private(set) var turnTime: UInt64 = MonotonicClock.nanoseconds()

    private let name: String
    let shard: LoopShard?
    let receiveSpares = ReceiveBlockSpares()

    init(name: String, shard: LoopShard? = nil, coalescing: UInt64 = 10_000_000) {
        self.name = name
        self.shard = shard
        self.coalescing = coalescing
        inbox = LoopInbox(wake: { [poll] in poll.wake() })
        LoopThread.start { self.run() }
    }

    // MARK: - Any thread

    func execute(_ job: @escaping @Sendable () -> Void) {
        inbox.execute(job)
    }

    /// The loop as the exchanges' task executor: a resumed task runs here, in order with the loop's other jobs.
    func enqueue(_ job: consuming ExecutorJob) {
        inbox.enqueue(UnownedJob(job))
    }

    var taskExecutor: (any TaskExecutor)? { self }

    func now() -> UInt64 { MonotonicClock.nanoseconds() }

    var coversCurrentThread: Bool { pthread_equal(pthread_self(), pthread_t(thread.load(ordering: .relaxed))) != 0 }

    // MARK: - Loop thread

    func register(_ channel: any EventLoopChannel) {
        channels[channel.descriptor] = channel
    }

    func setInterest(_ interest: IOInterest, for channel: any EventLoopChannel) {
        guard channel.registration.applied != interest else { return }
        channel.registration.applied = interest
        if let next = ParkedRead.setInterest(inSet: channel.registration.inSet, wanted: interest) {
            applyToSet(next, for: channel)
        }
    }

    private func applyToSet(_ interest: IOInterest, for channel: any EventLoopChannel) {
        let change = GuestTable.Change(from: channel.registration.inSet, to: interest)
        channel.registration.inSet = interest
        let fd = channel.descriptor
        poll.apply(change, fd, interest, key: UInt64(UInt32(bitPattern: fd)))
    }

    /// Hands a channel its event, or first removes a parked read the event came for.
    private func deliver(_ readiness: Readiness, to channel: any EventLoopChannel) {
        let registration = channel.registration
        if registration.inSet == registration.applied { return channel.handleReadiness(readiness) }
        let (next, heard) = ParkedRead.event(readiness, inSet: registration.inSet, wanted: registration.applied)
        if let next { applyToSet(next, for: channel) }
        if let heard { channel.handleReadiness(heard) }
    }

    /// No `EPOLL_CTL_DEL`: closing the descriptor in `descriptorReleased` (at the end of this turn, before the
    /// next `epoll_wait`) removes it from the set, and events of this turn's batch find no channel.
    func deregister(_ channel: any EventLoopChannel) {
        channel.registration.applied = []
        channel.registration.inSet = []
        channels[channel.descriptor] = nil
        released.append(channel)
    }

    func deadlineChanged(_ deadline: UInt64) {
        if deadline < firesAt { firesAt = deadline }
    }

    /// A turn is one pass of `run`: the jobs handed over, one `epoll_wait` batch of readiness, and a deadline
    /// sweep. End-of-turn jobs run after all of it, before the loop waits again.
    func atEndOfTurn(_ job: @escaping @Sendable () -> Void) {
        turnEnd.append(job)
    }

    func sendAtEndOfBatch(_ channel: any EventLoopChannel) -> Bool {
        held.add(channel)
        return true
    }

    // MARK: - Guests (loop thread)

    func attach(_ guest: any SocketGuest) { guests.attach(guest) }

    func detach(_ guest: any SocketGuest) { guests.detach(guest) }

    func watch(_ descriptor: Int32, _ interest: SocketInterest, for guest: any SocketGuest) {
        let change = guests.watch(descriptor, interest, for: guest)
        poll.apply(change, descriptor, interest, key: UInt64(UInt32(bitPattern: descriptor)) | Self.guestTag)
    }

    func guestDeadlineChanged(_ deadline: UInt64) { guests.deadlineChanged(deadline) }

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        EventLoopThreads.markCurrentThread()
        SocketHosts.markCurrentThread(self)
        EpollSet.nameCurrentThread(name)
        var jobs: [@Sendable () -> Void] = []
        var tasks: [UnownedJob] = []
        while true {
            runJobs(&jobs, &tasks)
            held.sendAll()
            finishReleasing()
            runTurnEnd()
            guests.endTurns()
            let block = inbox.prepareToSleep(idle: false).block
            let count = poll.wait(timeoutMillis: block ? timeoutMillis() : 0)
            if block { inbox.awoke() }
            turnTime = MonotonicClock.nanoseconds()
            for index in 0..<count {
                guard let (key, readiness) = poll.event(index) else { continue }
                if key & Self.guestTag == 0 {
                    if let channel = channels[Int32(truncatingIfNeeded: key)] { deliver(readiness, to: channel) }
                } else if let guest = guests.guest(watching: Int32(truncatingIfNeeded: key)) {
                    // A socket its guest stopped watching earlier in this batch hears nothing more.
                    guest.socketReady(Int32(truncatingIfNeeded: key), readiness)
                }
            }
            guests.runDeadlines(now: turnTime)
            held.sendAll()
            guests.endTurns()
            if firesAt != .max && MonotonicClock.nanoseconds() >= firesAt { sweep() }
        }
    }

    private func runJobs(_ jobs: inout [@Sendable () -> Void], _ tasks: inout [UnownedJob]) {
        inbox.take(&jobs, &tasks)
        if !jobs.isEmpty {
            for job in jobs { job() }
            jobs.removeAll(keepingCapacity: jobs.capacity <= 1024)
        }
        if !tasks.isEmpty {
            let executor = asUnownedTaskExecutor()
            for task in tasks { task.runSynchronously(on: executor) }
            tasks.removeAll(keepingCapacity: tasks.capacity <= 1024)
        }
    }

    private func runTurnEnd() {
        guard !turnEnd.isEmpty else { return }
        let done = turnEnd
        turnEnd.removeAll(keepingCapacity: true)
        for job in done { job() }
    }

    private func finishReleasing() {
        guard !released.isEmpty else { return }
        let done = released
        released.removeAll()
        for channel in done { channel.descriptorReleased() }
    }

    /// Milliseconds until the earliest deadline (the channels' sweep or a guest's), rounded up (-1: none).
    private func timeoutMillis() -> Int32 {
        let next = min(firesAt, guests.firesAt)
        guard next != .max else { return -1 }
        let now = MonotonicClock.nanoseconds()
        guard next > now else { return 0 }
        return Int32(clamping: (next - now + 999_999) / 1_000_000)
    }

    private func sweep() {
        let now = MonotonicClock.nanoseconds()
        firesAt = .max
        let next = DeadlineSweep.run(channels, now: now, coalescing: coalescing)
        // Deadlines set during the sweep went through `deadlineChanged` and may be earlier.
        firesAt = min(firesAt, next)
    }
}
#endif
