internal import CCurl
import Glibc
import PortcullisCore
import Synchronization

/// libcurl's process-wide initialisation, run once before the first multi handle exists.
private let curlGlobalInit: Bool = curl_global_init(pc_curl_global_default()) == CURLE_OK

/// What every multi handle of one client shares: settings, the response window and bulk budgets and the count of
/// live transfers.
final class CurlShared: Sendable {
    let configuration: UpstreamConfiguration
    /// Shared by the response streams of all transfers (see `WindowBudget`).
    let windowBudget: WindowBudget
    /// The extra memory of bulk transfers (see `ReceiveSizing`).
    let bulkBudget: WindowBudget
    let active = Atomic<Int>(0)

    init(configuration: UpstreamConfiguration) {
        self.configuration = configuration
        windowBudget = WindowBudget(bytes: configuration.responseWindowBudgetBytes)
        bulkBudget = WindowBudget(bytes: configuration.bulkBudgetBytes)
    }
}

/// One curl multi handle driven by `curl_multi_socket_action` as the guest of an event loop (`SocketHost`): the
/// HTTP loop whose exchanges start the transfers, or the client's own thread (`CurlLoopThread`) for callers on no
/// loop. curl's sockets (`CURLMOPT_SOCKETFUNCTION`) are watched by the host; curl's timer
/// (`CURLMOPT_TIMERFUNCTION`), the flush of response streams and each transfer's first-byte deadline are kept
/// in `CurlLoopDeadlines` and run when the host says they are due.
///
/// Why a guest of the connection's loop: a proxied request then runs on one thread from the client's request to
/// the upstream's answer — the exchange adds its transfer at once, curl's callbacks write the head and body where
/// the awaiting exchange resumes, and no wake-up crosses threads (bench/NOTES.md, "What binds S16").
///
/// Threading contract: every curl call and every mutable field below is confined to the host's thread (hence
/// `@unchecked Sendable`); other threads only `execute` jobs. Callbacks curl makes run on that thread too,
/// because curl calls them from inside the calls made there.
///
/// Sockets curl closes are closed when the host's turn ends (`CURLOPT_CLOSESOCKETFUNCTION`), after the
/// readiness batch that might still name their number: a socket opened meanwhile cannot reuse the number and
/// receive a stale event.
///
/// Lifetime: the host holds the multi handle from `attach` until `stop` (the client's deinit) and the last
/// transfer has finished; then it is cleaned up and detached.
final class CurlMulti: SocketGuest, @unchecked Sendable {
    let host: any SocketHost
    let shared: CurlShared
    private let multi: UnsafeMutableRawPointer

    // Confined to the host's thread.
    /// curl's sockets the host watches, with the interest curl asked for; `parked` when curl wants nothing from
    /// the socket now (see `updateSocket`).
    private var watched: [Int32: (interest: SocketInterest, parked: Bool)] = [:]
    private var closing: [Int32] = []
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var deadlines = CurlLoopDeadlines<UnsafeMutableRawPointer>()
    /// Response streams holding bytes for a waiting consumer below its low-water mark (see
    /// `ResponseBodyStream`), woken once their bytes are `flushDelayNanoseconds` old.
    private var pendingFlush: [ObjectIdentifier: ResponseBodyStream] = [:]
    private var stopRequested = false
    private var stopped = false
    /// Calls into curl in progress: curl forbids adding or removing handles from inside its callbacks.
    private(set) var curlDepth = 0
    /// Easy handles of finished transfers, reset for the next (`takeEasy`): `curl_easy_init` and
    /// `curl_easy_cleanup` cost ~24 allocations per request, a reset only the options' own.
    private var spareEasy: [UnsafeMutableRawPointer] = []
    private static let maxSpareEasy = 64
    static let flushDelayNanoseconds: UInt64 = 1_000_000

    var verifyTLS: Bool { shared.configuration.verifyTLS }
    var windowBudget: WindowBudget { shared.windowBudget }
    var bulkBudget: WindowBudget { shared.bulkBudget }
    /// The host's clock at the start of its turn: what the per-chunk callbacks (idle checks, body activity) and
    /// the flush read instead of the clock itself, several times per transfer. Timeouts are seconds long and the
    /// flush delay a millisecond; a turn is far shorter.
    var turnTime: UInt64 { host.turnTime }

    /// Creates the multi handle for `host`; it runs nothing until `attach`ed there.
    init(host: any SocketHost, shared: CurlShared) {
        _ = curlGlobalInit
        self.host = host
        self.shared = shared
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed (out of memory)") }
        self.multi = multi
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = pc_curl_multi_setopt_socket_function(multi, curlSocketCallback)
        _ = pc_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = pc_curl_multi_setopt_timer_function(multi, curlTimerCallback)
        _ = pc_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        _ = pc_curl_multi_setopt_long(
            multi, CURLMOPT_MAX_HOST_CONNECTIONS, shared.configuration.maxConnectionsPerHost)
        _ = pc_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, shared.configuration.maxIdleConnections)
    }

    /// A multi handle for `host`, attached by a job there (before any transfer's, as the host runs jobs in order).
    static func made(on host: any SocketHost, shared: CurlShared) -> CurlMulti {
        let multi = CurlMulti(host: host, shared: shared)
        host.execute { multi.attach() }
        return multi
    }

    /// Starts running on the host. Call on the host's thread, once.
    func attach() {
        host.attach(self)
    }

    // MARK: any thread

    /// Runs `job` on the host's thread after the current callback.
    func execute(_ job: @escaping @Sendable () -> Void) { host.execute(job) }

    /// Whether `job` may run right here instead of through `execute`: on the host's thread, outside curl.
    var mayRunInline: Bool { host.coversCurrentThread && curlDepth == 0 }

    /// Cleans up once every transfer has finished (the owning client is gone).
    func stop() {
        host.execute { [self] in
            stopRequested = true
            turnEnded()
        }
    }

    /// The opaque pointer given to curl as close-socket user data (lives as long as the multi handle).
    var closeSocketContext: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: transfers (host thread)

    /// Adds a configured easy handle; `transfer` is kept alive until `remove`.
    func add(_ transfer: CurlTransfer, easy: UnsafeMutableRawPointer) -> Bool {
        precondition(host.coversCurrentThread, "curl handles are added on their host's thread")
        transfers[easy] = transfer
        let added = inCurl { curl_multi_add_handle(multi, easy) == CURLM_OK }
        guard added else {
            transfers[easy] = nil
            return false
        }
        shared.active.add(1, ordering: .relaxed)
        return true
    }

    /// Removes an easy handle (finished or aborted). curl closes the connection of an unfinished transfer.
    func remove(easy: UnsafeMutableRawPointer) {
        precondition(host.coversCurrentThread, "curl handles are removed on their host's thread")
        deadlines.cancel(easy)
        guard transfers.removeValue(forKey: easy) != nil else { return }
        curl_multi_remove_handle(multi, easy)
        shared.active.subtract(1, ordering: .relaxed)
    }

    /// An easy handle in curl's default state: a reset spare, or a new one.
    func takeEasy() -> UnsafeMutableRawPointer? {
        spareEasy.popLast() ?? curl_easy_init()
    }

    /// Takes back an easy handle out of the multi handle (removed, or never added), for `takeEasy`.
    func recycle(easy: UnsafeMutableRawPointer) {
        guard !stopped, spareEasy.count < Self.maxSpareEasy else { return curl_easy_cleanup(easy) }
        curl_easy_reset(easy)
        spareEasy.append(easy)
    }

    /// The transfer of `easy` (added) hears `firstByteDeadlinePassed` once `deadline` is reached.
    func setFirstByteDeadline(_ deadline: UInt64, easy: UnsafeMutableRawPointer) {
        deadlines.set(easy, at: deadline)
        host.guestDeadlineChanged(deadline)
    }

    func cancelFirstByteDeadline(easy: UnsafeMutableRawPointer) {
        deadlines.cancel(easy)
    }

    /// Pauses or resumes `easy` as `mask` says, then collects what finished meanwhile.
    func pause(easy: UnsafeMutableRawPointer, mask: Int32) {
        // May re-enter the write/read callbacks before it returns; they only touch the buffers' locks.
        _ = inCurl { curl_easy_pause(easy, mask) }
        drainMessages()
    }

    /// `stream` holds bytes its waiting consumer was not woken for: wake it within the flush delay.
    func scheduleFlush(_ stream: ResponseBodyStream) {
        pendingFlush[ObjectIdentifier(stream)] = stream
        armFlush()
    }

    // MARK: SocketGuest (host thread)

    func socketReady(_ descriptor: Int32, _ readiness: SocketReadiness) {
        // A socket curl stopped watching earlier in this batch hears nothing more.
        guard let state = watched[descriptor] else { return }
        if state.parked {
            // Something happened on a socket curl wants nothing from (an idle connection closed by the server, a
            // paused transfer's data): stop watching it now, or the level-triggered host would report it forever.
            host.watch(descriptor, [], for: self)
            watched[descriptor] = nil
            return
        }
        var mask: Int32 = 0
        if !readiness.isDisjoint(with: [.readable, .failed]) { mask |= CURL_CSELECT_IN }
        if readiness.contains(.writable) { mask |= CURL_CSELECT_OUT }
        if readiness.contains(.errorReported) { mask |= CURL_CSELECT_ERR }
        socketAction(descriptor, mask)
    }

    func runDeadlines(now: UInt64) -> UInt64 {
        if deadlines.takeCurl(now: now) { socketAction(pc_curl_socket_timeout(), 0) }
        if deadlines.takeFlush(now: now) { flushDue() }
        for easy in deadlines.takeDue(now: now) { transfers[easy]?.firstByteDeadlinePassed() }
        return deadlines.next ?? .max
    }

    func turnEnded() {
        if !closing.isEmpty {
            for fd in closing { _ = Glibc.close(fd) }
            closing.removeAll(keepingCapacity: true)
        }
        if stopRequested && !stopped && transfers.isEmpty { shutDown() }
    }

    // MARK: private

    private func inCurl<T>(_ call: () -> T) -> T {
        curlDepth += 1
        defer { curlDepth -= 1 }
        return call()
    }

    /// Drives curl after an event (or its timer), then completes whatever finished.
    private func socketAction(_ socket: Int32, _ mask: Int32) {
        var running: Int32 = 0
        _ = inCurl { curl_multi_socket_action(multi, socket, mask, &running) }
        drainMessages()
    }

    private func drainMessages() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard pc_curl_msg_is_done(message) != 0, let easy = message.pointee.easy_handle else { continue }
            let result = pc_curl_msg_result(message)
            transfers[easy]?.complete(result)
        }
    }

    private func armFlush() {
        guard deadlines.flush == nil else { return }
        let at = turnTime &+ Self.flushDelayNanoseconds
        deadlines.armFlush(at: at)
        host.guestDeadlineChanged(at)
    }

    private func flushDue() {
        // A little slack, so a stream made pending just after the flush was armed is not left for a whole period.
        let age = Self.flushDelayNanoseconds / 2
        for (key, stream) in pendingFlush where !stream.flush(olderThan: age) {
            pendingFlush[key] = nil
        }
        if !pendingFlush.isEmpty { armFlush() }
    }

    private func shutDown() {
        stopped = true
        for easy in spareEasy { curl_easy_cleanup(easy) }
        spareEasy.removeAll()
        curl_multi_cleanup(multi)  // closes the cached connections through `closeSocket`, at once now
        for fd in watched.keys { host.watch(fd, [], for: self) }
        watched.removeAll()
        host.detach(self)
    }

    // MARK: curl callbacks (host thread)

    fileprivate func updateSocket(_ fd: Int32, what: Int32) {
        var wanted: SocketInterest = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { wanted.insert(.read) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { wanted.insert(.write) }
        let current = watched[fd]
        if wanted.isEmpty {
            // curl keeps the socket but wants nothing from it now: a connection back in its cache after each
            // request, or a paused transfer. It stays in the host's set, parked, so the next request on the
            // connection costs no interest change at all (two `epoll_ctl`s per proxied request otherwise); the
            // first event on a parked socket removes it (`socketReady`).
            if current != nil { watched[fd]?.parked = true }
            return
        }
        if current?.interest != wanted { host.watch(fd, wanted, for: self) }
        watched[fd] = (wanted, false)
    }

    fileprivate func updateTimer(milliseconds: Int) {
        // Zero ("as soon as possible": an un-paused transfer, a new one) is due in the host's current turn — its
        // guests' deadlines run after the turn's batch, before it sleeps — and never runs from inside this
        // callback, which curl forbids. A real delay counts from now.
        let now = milliseconds == 0 ? host.turnTime : MonotonicClock.nanoseconds()
        deadlines.curlAsked(milliseconds: milliseconds, now: now)
        if let at = deadlines.curl { host.guestDeadlineChanged(at) }
    }

    fileprivate func closeSocket(_ fd: Int32) -> Int32 {
        if watched.removeValue(forKey: fd) != nil { host.watch(fd, [], for: self) }
        if stopped { return Glibc.close(fd) }
        closing.append(fd)
        return 0
    }
}

private let curlSocketCallback: curl_socket_callback = { _, fd, what, userp, _ in
    guard let userp else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().updateSocket(fd, what: what)
    return 0
}

private let curlTimerCallback: curl_multi_timer_callback = { _, timeoutMS, userp in
    guard let userp else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().updateTimer(milliseconds: timeoutMS)
    return 0
}

/// Installed on every easy handle with `CURLOPT_CLOSESOCKETDATA` = the multi handle (`closeSocketContext`).
let curlCloseSocketCallback: curl_closesocket_callback = { clientp, fd in
    guard let clientp else { return Glibc.close(fd) }
    return Unmanaged<CurlMulti>.fromOpaque(clientp).takeUnretainedValue().closeSocket(fd)
}
