/// The lifecycle of one upstream attempt (`CurlTransfer`): ONE state at a time, each naming what it owns.
///
/// ```
///  created ──start──▶ sending ──request sent──▶ awaitingHead ──head──▶ streaming ──done──▶ finished
///     │                  │ head (early answer)                           ▲       ▲
///     │                  └───────────────────────────────────────────────┘       │
///     └──abort──▶ abortedBeforeStart ──start──▶ finished   (any running state ──failure, abort, timeout──┘)
/// ```
///
/// | state | owns | deadline |
/// |---|---|---|
/// | `created` | nothing yet | — |
/// | `abortedBeforeStart` | the error `start` will report | — |
/// | `sending` | the running handle: easy handle, header list, head waiter, head being collected, upload cursor | none: an upload may take as long as it moves (curl's low-speed limit) |
/// | `awaitingHead` | the running handle | first byte: the response head must arrive this long after the request was sent |
/// | `streaming` | the running handle (head delivered) and when body bytes last moved | upstream idle: no byte either way for this long, unless we paused the transfer ourselves |
/// | `finished` | nothing: the handle is cleaned up and the outcome reported, exactly once | — |
///
/// Pure: no curl call and no clock inside (times are the caller's), so every transition and both timeouts
/// are tested with plain numbers. `Handle` is what a running transfer owns (`CurlHandle` in production).
/// An illegal transition is a `preconditionFailure`.
struct TransferLifecycle<Handle> {
    enum State {
        case created
        case abortedBeforeStart(UpstreamError)
        case sending(Handle)
        /// `firstByteDeadline` nil: no first-byte timeout.
        case awaitingHead(Handle, firstByteDeadline: UInt64?)
        case streaming(Handle, lastActivity: UInt64)
        case finished
    }

    private(set) var state = State.created
    /// Nanoseconds; nil disables the timeout.
    let firstByteTimeout: UInt64?
    let idleTimeout: UInt64?

    init(firstByteTimeout: UInt64?, idleTimeout: UInt64?) {
        self.firstByteTimeout = firstByteTimeout
        self.idleTimeout = idleTimeout
    }

    /// The running handle, in the three running states.
    var handle: Handle? {
        switch state {
        case .sending(let handle), .awaitingHead(let handle, _), .streaming(let handle, _): handle
        case .created, .abortedBeforeStart, .finished: nil
        }
    }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    var headDelivered: Bool {
        if case .streaming = state { return true }
        return false
    }

    /// Aborted before `start` ran on the loop: `created` → `abortedBeforeStart`. Returns false when the
    /// transfer is already running or over (the caller then finishes it, which may do nothing).
    mutating func abortBeforeStart(_ error: UpstreamError) -> Bool {
        guard case .created = state else { return false }
        state = .abortedBeforeStart(error)
        return true
    }

    /// The error of an abort that came before `start` (`abortedBeforeStart` → `finished`), or nil.
    mutating func takeEarlyAbort() -> UpstreamError? {
        guard case .abortedBeforeStart(let error) = state else { return nil }
        state = .finished
        return error
    }

    /// The handle is in the multi handle: `created` → `sending`, or straight to `awaitingHead` when there is
    /// no body to send. Returns the first-byte deadline to arm, if one starts now.
    mutating func start(_ handle: Handle, requestComplete: Bool, now: UInt64) -> UInt64? {
        guard case .created = state else { preconditionFailure("transfer started in state \(state)") }
        state = .sending(handle)
        return requestComplete ? requestSent(now: now) : nil
    }

    /// The whole request is sent: `sending` → `awaitingHead`, with the first-byte deadline (returned, to arm a
    /// timer). In any later state (an early answer, a re-sent body) nothing changes.
    mutating func requestSent(now: UInt64) -> UInt64? {
        guard case .sending(let handle) = state else { return nil }
        let deadline = firstByteTimeout.map { now &+ $0 }
        state = .awaitingHead(handle, firstByteDeadline: deadline)
        return deadline
    }

    /// The final response head is complete: `sending`/`awaitingHead` → `streaming`. Returns the handle whose
    /// head to deliver; nil when it was delivered already or the transfer is over.
    mutating func headArrived(now: UInt64) -> Handle? {
        switch state {
        case .sending(let handle), .awaitingHead(let handle, _):
            state = .streaming(handle, lastActivity: now)
            return handle
        case .streaming, .finished:
            return nil
        case .created, .abortedBeforeStart:
            preconditionFailure("a head arrived in state \(state)")
        }
    }

    /// Bytes moved either way, or we paused the transfer ourselves (time paused by a slow consumer does not
    /// count towards the idle timeout). Only `streaming` keeps the time.
    mutating func activity(now: UInt64) {
        guard case .streaming(let handle, _) = state else { return }
        state = .streaming(handle, lastActivity: now)
    }

    /// The timeout that has passed at `now`, if any.
    func expiry(now: UInt64) -> UpstreamError? {
        switch state {
        case .awaitingHead(_, let deadline):
            guard let deadline else { return nil }
            return now >= deadline ? .timedOut(.firstByte) : nil
        case .streaming(_, let lastActivity):
            guard let idleTimeout else { return nil }
            return now > lastActivity && now - lastActivity >= idleTimeout ? .timedOut(.idle) : nil
        case .created, .abortedBeforeStart, .sending, .finished:
            return nil
        }
    }

    /// Ends the transfer: any state → `finished`. Returns the handle to clean up (nil when none ran or it was
    /// over already) and whether its head had been delivered.
    mutating func finish() -> (handle: Handle?, headDelivered: Bool) {
        let result = (handle, headDelivered)
        state = .finished
        return result
    }
}
