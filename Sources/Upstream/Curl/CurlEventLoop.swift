internal import CCurl
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// libcurl's process-wide initialisation, run once before the first multi handle exists.
private let curlGlobalInit: Bool = curl_global_init(pc_curl_global_default()) == CURLE_OK

/// The event loop behind an `UpstreamClient`: ONE curl multi handle driven by `curl_multi_socket_action` from
/// DispatchSource read/write sources per socket (`CURLMOPT_SOCKETFUNCTION`) and one timer source
/// (`CURLMOPT_TIMERFUNCTION`), all on one serial queue.
///
/// Threading contract: every curl call and every mutable field below is confined to `queue` (hence
/// `@unchecked Sendable`); other threads only enqueue blocks. Callbacks curl makes run on that queue too,
/// because curl calls them from inside the calls we make there.
///
/// Socket close is deferred (`CURLOPT_CLOSESOCKETFUNCTION`): a socket is closed only after its dispatch sources
/// finished cancelling, so a reused descriptor number can never be unregistered by a stale source.
final class CurlEventLoop: @unchecked Sendable {
    let queue = DispatchQueue(label: "portcullis.upstream.curl")
    private let multi: UnsafeMutableRawPointer
    private var watches: [Int32: SocketWatch] = [:]
    private let sockets = SocketCloser()
    private let timer: any DispatchSourceTimer
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private let active = Atomic<Int>(0)
    let verifyTLS: Bool
    /// Shared by the response streams of all transfers (see `WindowBudget`).
    let windowBudget: WindowBudget
    /// Response streams holding bytes for a waiting consumer below its low-water mark (see
    /// `ResponseBodyStream`), woken by `flushTimer` once their bytes are `flushDelayNanoseconds` old.
    private var pendingFlush: [ObjectIdentifier: ResponseBodyStream] = [:]
    private let flushTimer: any DispatchSourceTimer
    private var flushArmed = false
    /// A "time-out now" run is queued (see `updateTimer`).
    private var runNowPending = false
    /// When `timer` fires (`DispatchTime` uptime nanoseconds), given what curl asks for.
    private var timerSchedule = CurlTimerSchedule()
    static let flushDelayNanoseconds: UInt64 = 1_000_000

    /// Transfers added to the multi handle and not yet finished (leak checks, `/metrics`).
    var activeTransfers: Int { active.load(ordering: .relaxed) }

    init(configuration: UpstreamConfiguration) {
        _ = curlGlobalInit
        verifyTLS = configuration.verifyTLS
        windowBudget = WindowBudget(bytes: configuration.responseWindowBudgetBytes)
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed (out of memory)") }
        self.multi = multi
        timer = DispatchSource.makeTimerSource(queue: queue)
        flushTimer = DispatchSource.makeTimerSource(queue: queue)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = pc_curl_multi_setopt_socket_function(multi, curlSocketCallback)
        _ = pc_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        _ = pc_curl_multi_setopt_timer_function(multi, curlTimerCallback)
        _ = pc_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        _ = pc_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        _ = pc_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maxIdleConnections)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            timerSchedule.firing()
            socketAction(pc_curl_socket_timeout(), 0)
            if let deadline = timerSchedule.afterRun(now: DispatchTime.now().uptimeNanoseconds) {
                timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
            }
        }
        timer.schedule(deadline: .distantFuture)
        timer.activate()
        flushTimer.setEventHandler { [weak self] in self?.flushDue() }
        flushTimer.schedule(deadline: .distantFuture)
        flushTimer.activate()
    }

    deinit {
        // Runs once no transfer holds the loop (transfers keep it alive), so the multi handle is idle.
        timer.cancel()
        flushTimer.cancel()
        for (_, watch) in watches { watch.cancelAll(sockets) }
        curl_multi_cleanup(multi)
    }

    /// The opaque pointer given to curl as close-socket user data (lives as long as the loop).
    var socketCloserPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(sockets).toOpaque() }

    // MARK: transfers (queue only)

    /// Adds a configured easy handle; `transfer` is kept alive until `finish`.
    func add(_ transfer: CurlTransfer, easy: UnsafeMutableRawPointer) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
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
        dispatchPrecondition(condition: .onQueue(queue))
        guard transfers.removeValue(forKey: easy) != nil else { return }
        curl_multi_remove_handle(multi, easy)
        active.subtract(1, ordering: .relaxed)
    }

    /// Drives curl after an event (or the timer), then completes whatever finished.
    private func socketAction(_ socket: Int32, _ mask: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, mask, &running)
        drainMessages()
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
        dispatchPrecondition(condition: .onQueue(queue))
        pendingFlush[ObjectIdentifier(stream)] = stream
        armFlushTimer()
    }

    private func armFlushTimer() {
        guard !flushArmed, !pendingFlush.isEmpty else { return }
        flushArmed = true
        flushTimer.schedule(
            deadline: .now() + .nanoseconds(Int(Self.flushDelayNanoseconds)),
            leeway: .microseconds(200))
    }

    private func flushDue() {
        flushArmed = false
        // A little slack, so a stream made pending just after the timer was armed is not left for a whole period.
        let age = Self.flushDelayNanoseconds / 2
        for (key, stream) in pendingFlush where !stream.flush(olderThan: age) {
            pendingFlush[key] = nil
        }
        armFlushTimer()
    }

    // MARK: curl callbacks (queue only)

    fileprivate func updateSocket(_ fd: Int32, what: Int32) {
        let watch = watches[fd] ?? SocketWatch(fd: fd)
        watches[fd] = watch
        let wantRead = what == CURL_POLL_IN || what == CURL_POLL_INOUT
        let wantWrite = what == CURL_POLL_OUT || what == CURL_POLL_INOUT
        if wantRead, watch.read == nil {
            if let parked = sockets.unpark(fd) {
                watch.read = parked
                parked.resume()
            } else {
                let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
                source.setEventHandler { [weak self] in self?.socketAction(fd, CURL_CSELECT_IN) }
                watch.read = source
                source.activate()
            }
        } else if !wantRead, let source = watch.read {
            // curl keeps the socket but does not want it read now: a paused transfer (hundreds of times per
            // GiB with a slow client), or a connection back in its cache until the next request. Suspended, not
            // cancelled, so the next `CURL_POLL_IN` resumes it instead of registering a new source.
            watch.read = nil
            sockets.park(source, fd: fd)
        }
        if wantWrite, watch.write == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [weak self] in self?.socketAction(fd, CURL_CSELECT_OUT) }
            watch.write = source
            source.activate()
        } else if !wantWrite, let source = watch.write {
            watch.write = nil
            sockets.cancel(source, fd: fd)
        }
        if what == CURL_POLL_REMOVE { watches[fd] = nil }
    }

    /// curl's timer callback: the timer moves only when `CurlTimerSchedule` says so (it explains why).
    fileprivate func updateTimer(milliseconds: Int) {
        let deadline = timerSchedule.curlAsked(milliseconds: milliseconds, now: DispatchTime.now().uptimeNanoseconds)
        if milliseconds == 0 {
            // "As soon as possible" (an un-paused transfer, a new one): run on this queue right after the current
            // block instead of through a timer. Not from inside the callback itself, which curl forbids.
            guard !runNowPending else { return }
            runNowPending = true
            queue.async { [weak self] in
                guard let self else { return }
                runNowPending = false
                socketAction(pc_curl_socket_timeout(), 0)
            }
        } else if let deadline {
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
        }
    }
}

/// The read and write sources currently watching one socket.
private final class SocketWatch {
    let fd: Int32
    var read: (any DispatchSourceRead)?
    var write: (any DispatchSourceWrite)?
    init(fd: Int32) { self.fd = fd }

    func cancelAll(_ closer: SocketCloser) {
        if let read { closer.cancel(read, fd: fd) }
        if let write { closer.cancel(write, fd: fd) }
        read = nil
        write = nil
    }
}

/// Defers `close(fd)` until every dispatch source on `fd` has finished cancelling. Thread-safe (the
/// close-socket callback may also run from the loop's deinit).
///
/// It also holds the suspended ("parked") read sources of sockets curl keeps open but does not want read now, and
/// cancels a parked source when curl closes its socket. Making a Dispatch source and cancelling it each cost the
/// manager thread a wake-up and an `epoll_ctl`, and curl asks for that on every pause and un-pause of a transfer
/// and on every request over a reused connection; a suspended source fires no events (it does not spin on a
/// readable socket) and resuming it delivers what arrived meanwhile.
final class SocketCloser: Sendable {
    private let state = Mutex<(cancelling: [Int32: Int], closeRequested: Set<Int32>)>(([:], []))
    private let parked = Mutex<[Int32: ParkedRead]>([:])

    /// Dispatch sources are thread-safe objects (suspend, resume and cancel may come from any thread); the
    /// protocol existential is just not marked `Sendable`.
    private struct ParkedRead: @unchecked Sendable { let source: any DispatchSourceRead }

    /// Suspends `source` until `unpark(fd)` (which the caller resumes) or `close(fd)`.
    func park(_ source: any DispatchSourceRead, fd: Int32) {
        source.suspend()
        let entry = ParkedRead(source: source)
        parked.withLock { $0[fd] = entry }
    }

    /// The parked, still suspended read source of `fd`, if any; the caller resumes it.
    func unpark(_ fd: Int32) -> (any DispatchSourceRead)? {
        parked.withLock { $0.removeValue(forKey: fd) }?.source
    }

    func cancel(_ source: any DispatchSourceProtocol, fd: Int32) {
        state.withLock { $0.cancelling[fd, default: 0] += 1 }
        source.setCancelHandler { [self] in
            let close = state.withLock { s -> Bool in
                let left = (s.cancelling[fd] ?? 1) - 1
                s.cancelling[fd] = left > 0 ? left : nil
                return left <= 0 && s.closeRequested.remove(fd) != nil
            }
            if close { _ = Glibc.close(fd) }
        }
        source.cancel()
    }

    func close(_ fd: Int32) {
        if let source = unpark(fd) {
            cancel(source, fd: fd)
            source.resume()  // a suspended source runs its cancel handler only once resumed
        }
        let now = state.withLock { s -> Bool in
            if s.cancelling[fd] != nil {
                s.closeRequested.insert(fd)
                return false
            }
            return true
        }
        if now { _ = Glibc.close(fd) }
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

/// Installed on every easy handle with `CURLOPT_CLOSESOCKETDATA` = the loop's `SocketCloser`.
let curlCloseSocketCallback: curl_closesocket_callback = { clientp, fd in
    guard let clientp else { return Glibc.close(fd) }
    Unmanaged<SocketCloser>.fromOpaque(clientp).takeUnretainedValue().close(fd)
    return 0
}
