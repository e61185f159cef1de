internal import CCurl
import Glibc
import PortcullisCore
import Synchronization

/// libcurl's process-wide initialisation, run once before the first multi handle exists.
private let curlGlobalInit: Bool = curl_global_init(pc_curl_global_default()) == CURLE_OK

/// The event loop behind an `UpstreamClient`: ONE curl multi handle driven by `curl_multi_socket_action` from a
/// thread of its own that waits in `epoll_wait` on curl's sockets (`CURLMOPT_SOCKETFUNCTION`), sleeping until
/// the earliest of curl's timer (`CURLMOPT_TIMERFUNCTION`) and the loop's own deadlines (`CurlLoopDeadlines`).
///
/// Why a thread and not Dispatch sources on a serial queue: with sources, every readiness event of an upstream
/// socket is fetched by Dispatch's manager thread and handed to a worker that runs the queue, and every change of
/// interest (curl asks for one on each request over a reused connection and on each pause) or of a timer goes
/// through the manager again — about six context switches per proxied metadata GET (bench/NOTES.md, "What binds
/// S16"). Here readiness, curl's callbacks and the deadlines all run on the one thread that waits, interest changes
/// are one `epoll_ctl` there, and other threads reach it through `execute` (an `eventfd` write, only when it
/// sleeps).
///
/// Threading contract: every curl call and every mutable field below is confined to the loop thread (hence
/// `@unchecked Sendable`); other threads only `execute` jobs. Callbacks curl makes run on that thread too,
/// because curl calls them from inside the calls made there.
///
/// Sockets curl closes are closed at the end of the loop turn (`CURLOPT_CLOSESOCKETFUNCTION`), after the
/// readiness batch that might still name their number: a socket curl opens meanwhile cannot reuse the number
/// and receive a stale event.
///
/// Lifetime: the thread holds the loop until `stop` (the client's deinit) and the last transfer has finished;
/// then it cleans up the multi handle and exits.
final class CurlEventLoop: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let epollFD: Int32
    private let wakeFD: Int32
    private static let wakeKey = UInt64.max

    private struct Inbox {
        var jobs: [@Sendable () -> Void] = []
        /// The loop is in (or about to enter) a blocking `epoll_wait`: the next job must wake it.
        var sleeping = false
        var stopRequested = false
    }
    private let inbox = Mutex(Inbox())
    /// The loop thread's id (`pthread_t`), read by `isCurrent` from any thread.
    private let thread = Atomic<UInt>(0)

    // Confined to the loop thread.
    /// The epoll events each of curl's sockets is registered for.
    private var watched: [Int32: UInt32] = [:]
    private var closing: [Int32] = []
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var deadlines = CurlLoopDeadlines<UnsafeMutableRawPointer>()
    /// Response streams holding bytes for a waiting consumer below its low-water mark (see
    /// `ResponseBodyStream`), woken once their bytes are `flushDelayNanoseconds` old.
    private var pendingFlush: [ObjectIdentifier: ResponseBodyStream] = [:]
    private var stopping = false
    /// Easy handles of finished transfers, reset for the next (`takeEasy`): `curl_easy_init` and
    /// `curl_easy_cleanup` cost ~24 allocations per request, a reset only the options' own.
    private var spareEasy: [UnsafeMutableRawPointer] = []
    private static let maxSpareEasy = 64
    /// The clock when the current turn began (after `epoll_wait`): what the per-chunk callbacks (idle checks,
    /// body activity) and the flush read instead of the clock itself, several times per transfer. Timeouts are
    /// seconds long and the flush delay a millisecond; a turn is far shorter.
    private(set) var turnTime: UInt64 = MonotonicClock.nanoseconds()

    private let active = Atomic<Int>(0)
    let verifyTLS: Bool
    /// Shared by the response streams of all transfers (see `WindowBudget`).
    let windowBudget: WindowBudget
    static let flushDelayNanoseconds: UInt64 = 1_000_000

    /// Transfers added to the multi handle and not yet finished (leak checks, `/metrics`).
    var activeTransfers: Int { active.load(ordering: .relaxed) }

    init(configuration: UpstreamConfiguration) {
        _ = curlGlobalInit
        verifyTLS = configuration.verifyTLS
        windowBudget = WindowBudget(bytes: configuration.responseWindowBudgetBytes)
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed (out of memory)") }
        self.multi = multi
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        precondition(epollFD >= 0 && wakeFD >= 0, "cannot create the upstream event loop: errno \(errno)")
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.wakeKey))
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0, "cannot watch the wake-up descriptor")
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = pc_curl_multi_setopt_socket_function(multi, curlSocketCallback)
        _ = pc_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = pc_curl_multi_setopt_timer_function(multi, curlTimerCallback)
        _ = pc_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        _ = pc_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        _ = pc_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maxIdleConnections)
        startThread()
    }

    deinit {
        // The thread has exited (it holds the loop until then) and cleaned up the multi handle.
        _ = Glibc.close(epollFD)
        _ = Glibc.close(wakeFD)
    }

    private func startThread() {
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(
            &handle, nil,
            { context in
                Unmanaged<CurlEventLoop>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        precondition(result == 0, "cannot start the upstream event loop thread: \(result)")
        pthread_detach(handle)
    }

    // MARK: any thread

    /// Runs `job` on the loop thread after the current turn; wakes the loop if it waits.
    func execute(_ job: @escaping @Sendable () -> Void) {
        let wake = inbox.withLock { inbox -> Bool in
            inbox.jobs.append(job)
            guard inbox.sleeping else { return false }
            inbox.sleeping = false
            return true
        }
        if wake { _ = eventfd_write(wakeFD, 1) }
    }

    /// Lets the thread exit once every transfer has finished (the owning client is gone).
    func stop() {
        let wake = inbox.withLock { inbox -> Bool in
            inbox.stopRequested = true
            let sleeping = inbox.sleeping
            inbox.sleeping = false
            return sleeping
        }
        if wake { _ = eventfd_write(wakeFD, 1) }
    }

    var isCurrent: Bool { pthread_equal(pthread_self(), pthread_t(thread.load(ordering: .relaxed))) != 0 }

    /// The opaque pointer given to curl as close-socket user data (lives as long as the loop).
    var closeSocketContext: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: transfers (loop thread)

    /// Adds a configured easy handle; `transfer` is kept alive until `remove`.
    func add(_ transfer: CurlTransfer, easy: UnsafeMutableRawPointer) -> Bool {
        precondition(isCurrent, "curl handles are added on the upstream loop")
        transfers[easy] = transfer
        guard curl_multi_add_handle(multi, easy) == CURLM_OK else {
            transfers[easy] = nil
            return false
        }
        active.add(1, ordering: .relaxed)
        return true
    }

    /// Removes an easy handle (finished or aborted). curl closes the connection of an unfinished transfer.
    func remove(easy: UnsafeMutableRawPointer) {
        precondition(isCurrent, "curl handles are removed on the upstream loop")
        deadlines.cancel(easy)
        guard transfers.removeValue(forKey: easy) != nil else { return }
        curl_multi_remove_handle(multi, easy)
        active.subtract(1, ordering: .relaxed)
    }

    /// An easy handle in curl's default state: a reset spare, or a new one.
    func takeEasy() -> UnsafeMutableRawPointer? {
        spareEasy.popLast() ?? curl_easy_init()
    }

    /// Takes back an easy handle out of the multi handle (removed, or never added), for `takeEasy`.
    func recycle(easy: UnsafeMutableRawPointer) {
        guard !stopping, spareEasy.count < Self.maxSpareEasy else { return curl_easy_cleanup(easy) }
        curl_easy_reset(easy)
        spareEasy.append(easy)
    }

    /// The transfer of `easy` (added) hears `firstByteDeadlinePassed` once `deadline` is reached.
    func setFirstByteDeadline(_ deadline: UInt64, easy: UnsafeMutableRawPointer) {
        deadlines.set(easy, at: deadline)
    }

    func cancelFirstByteDeadline(easy: UnsafeMutableRawPointer) {
        deadlines.cancel(easy)
    }

    /// Called after `curl_easy_pause` un-pauses a transfer: curl expires it at once via the timer callback,
    /// but finished transfers must still be collected.
    func drainMessages() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard pc_curl_msg_is_done(message) != 0, let easy = message.pointee.easy_handle else { continue }
            let result = pc_curl_msg_result(message)
            transfers[easy]?.complete(result)
        }
    }

    /// `stream` holds bytes its waiting consumer was not woken for: wake it within the flush delay.
    func scheduleFlush(_ stream: ResponseBodyStream) {
        pendingFlush[ObjectIdentifier(stream)] = stream
        deadlines.armFlush(at: turnTime &+ Self.flushDelayNanoseconds)
    }

    // MARK: the loop thread

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .relaxed)
        pc_curl_name_loop_thread("upstream")
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        var jobs: [@Sendable () -> Void] = []
        while true {
            runJobs(&jobs)
            runDeadlines()
            closeSockets()
            let idle = transfers.isEmpty
            let (block, exit) = inbox.withLock { inbox -> (Bool, Bool) in
                guard inbox.jobs.isEmpty else { return (false, false) }
                if inbox.stopRequested && idle { return (false, true) }
                inbox.sleeping = true
                return (true, false)
            }
            if exit { break }
            let count = epoll_wait(epollFD, events, Int32(capacity), block ? timeoutMillis() : 0)
            if block { inbox.withLock { $0.sleeping = false } }
            turnTime = MonotonicClock.nanoseconds()
            for index in 0..<max(0, Int(count)) {
                let event = events[index]
                if event.data.u64 == Self.wakeKey {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeFD, &value)
                    continue
                }
                let fd = Int32(truncatingIfNeeded: event.data.u64)
                // A socket curl stopped watching earlier in this batch hears nothing more.
                guard watched[fd] != nil else { continue }
                socketAction(fd, Self.curlMask(event.events))
            }
            closeSockets()
        }
        shutDown()
    }

    private func runJobs(_ jobs: inout [@Sendable () -> Void]) {
        inbox.withLock { swap(&$0.jobs, &jobs) }
        guard !jobs.isEmpty else { return }
        for job in jobs { job() }
        jobs.removeAll(keepingCapacity: jobs.capacity <= 1024)
    }

    private func runDeadlines() {
        let now = MonotonicClock.nanoseconds()
        turnTime = now
        if deadlines.takeCurl(now: now) { socketAction(pc_curl_socket_timeout(), 0) }
        if deadlines.takeFlush(now: now) { flushDue() }
        for easy in deadlines.takeDue(now: now) { transfers[easy]?.firstByteDeadlinePassed() }
    }

    /// Milliseconds until the earliest deadline, rounded up (-1: none).
    private func timeoutMillis() -> Int32 {
        guard let next = deadlines.next else { return -1 }
        let now = MonotonicClock.nanoseconds()
        guard next > now else { return 0 }
        return Int32(clamping: (next - now + 999_999) / 1_000_000)
    }

    private static func curlMask(_ events: UInt32) -> Int32 {
        var mask: Int32 = 0
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue) != 0 { mask |= CURL_CSELECT_IN }
        if events & EPOLLOUT.rawValue != 0 { mask |= CURL_CSELECT_OUT }
        if events & EPOLLERR.rawValue != 0 { mask |= CURL_CSELECT_ERR }
        return mask
    }

    /// Drives curl after an event (or its timer), then completes whatever finished.
    private func socketAction(_ socket: Int32, _ mask: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, mask, &running)
        drainMessages()
    }

    private func flushDue() {
        // A little slack, so a stream made pending just after the flush was armed is not left for a whole period.
        let age = Self.flushDelayNanoseconds / 2
        for (key, stream) in pendingFlush where !stream.flush(olderThan: age) {
            pendingFlush[key] = nil
        }
        if !pendingFlush.isEmpty {
            deadlines.armFlush(at: turnTime &+ Self.flushDelayNanoseconds)
        }
    }

    private func closeSockets() {
        guard !closing.isEmpty else { return }
        for fd in closing { _ = Glibc.close(fd) }
        closing.removeAll(keepingCapacity: true)
    }

    private func shutDown() {
        stopping = true
        for easy in spareEasy { curl_easy_cleanup(easy) }
        spareEasy.removeAll()
        curl_multi_cleanup(multi)  // closes the cached connections through `closeSocket`, at once now
        closeSockets()
        watched.removeAll()
    }

    // MARK: curl callbacks (loop thread)

    fileprivate func updateSocket(_ fd: Int32, what: Int32) {
        var wanted: UInt32 = 0
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { wanted |= EPOLLIN.rawValue }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { wanted |= EPOLLOUT.rawValue }
        let current = watched[fd]
        guard current != wanted || what == CURL_POLL_REMOVE else { return }
        if what == CURL_POLL_REMOVE || wanted == 0 {
            // Also when curl keeps the socket but wants nothing from it now (a paused transfer, a connection in
            // its cache): a level-triggered socket left in the set would wake the loop for nothing.
            if current != nil { _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
            watched[fd] = nil
            return
        }
        var event = epoll_event(events: wanted, data: epoll_data_t(u64: UInt64(UInt32(bitPattern: fd))))
        _ = epoll_ctl(epollFD, current == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event)
        watched[fd] = wanted
    }

    fileprivate func updateTimer(milliseconds: Int) {
        // Zero ("as soon as possible": an un-paused transfer, a new one) runs before the loop sleeps again, never
        // from inside this callback, which curl forbids.
        deadlines.curlAsked(milliseconds: milliseconds, now: MonotonicClock.nanoseconds())
    }

    fileprivate func closeSocket(_ fd: Int32) -> Int32 {
        if watched.removeValue(forKey: fd) != nil { _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
        if stopping { return Glibc.close(fd) }
        closing.append(fd)
        return 0
    }
}

private let curlSocketCallback: curl_socket_callback = { _, fd, what, userp, _ in
    guard let userp else { return 0 }
    Unmanaged<CurlEventLoop>.fromOpaque(userp).takeUnretainedValue().updateSocket(fd, what: what)
    return 0
}

private let curlTimerCallback: curl_multi_timer_callback = { _, timeoutMS, userp in
    guard let userp else { return 0 }
    Unmanaged<CurlEventLoop>.fromOpaque(userp).takeUnretainedValue().updateTimer(milliseconds: timeoutMS)
    return 0
}

/// Installed on every easy handle with `CURLOPT_CLOSESOCKETDATA` = the loop (`closeSocketContext`).
let curlCloseSocketCallback: curl_closesocket_callback = { clientp, fd in
    guard let clientp else { return Glibc.close(fd) }
    return Unmanaged<CurlEventLoop>.fromOpaque(clientp).takeUnretainedValue().closeSocket(fd)
}
