/// Client-wide settings; one client serves the whole process, with a curl multi handle on each event loop that
/// sends through it (see `UpstreamClient`).
public struct UpstreamConfiguration: Sendable, Equatable {
    /// Simultaneous connections to one host per multi handle, so per event loop (transfers beyond it wait in
    /// curl's queue).
    public var maxConnectionsPerHost: Int
    /// Idle connections kept for reuse across all hosts, per multi handle.
    public var maxIdleConnections: Int
    /// Response bytes buffered per transfer before it is paused (≤ 256 KiB by design).
    public var responseBufferBytes: Int
    /// curl's receive buffer per transfer (`CURLOPT_BUFFERSIZE`, 16 KiB…512 KiB): bytes read from the upstream
    /// socket per call. Part of the per-transfer memory, beside `responseBufferBytes`.
    public var receiveBufferBytes: Int = 32 * 1024
    /// Response-buffer bytes all transfers together may hold beyond their minimum window (an eighth of
    /// `responseBufferBytes`): fast downloads grow their window up to `responseBufferBytes` from this budget, so
    /// many concurrent downloads cost about transfers × the minimum window + this, not transfers × the maximum.
    public var responseWindowBudgetBytes: Int = 16 << 20
    /// A download the caller expects to be at least this large (`UpstreamRequest.expectedBodyBytes`) is a bulk
    /// transfer: it reads `bulkReceiveBufferBytes` per call into a response buffer of `bulkResponseBufferBytes`,
    /// while `bulkBudgetBytes` allows.
    public var bulkThresholdBytes: Int64 = 1 << 20
    /// curl's receive buffer for a bulk transfer. A read of 32 KiB frees so little of the socket's receive
    /// queue that nearly every one sends the upstream a window update (bench/NOTES.md, "Bulk transfers").
    public var bulkReceiveBufferBytes: Int = 128 * 1024
    /// The response buffer of a bulk transfer: its minimum window is one bulk read, and it grows to this from
    /// the window budget like any other.
    public var bulkResponseBufferBytes: Int = 1 << 20
    /// Memory all bulk transfers together may hold beyond what the same transfers would hold sized normally
    /// (each takes its larger curl buffer and larger minimum window from it). A transfer that finds the budget
    /// spent is sized normally, so many concurrent downloads (bench S11) stay bounded as before.
    public var bulkBudgetBytes: Int = 4 << 20
    /// Request-body bytes read ahead from the producer per transfer.
    public var requestBufferBytes: Int
    /// Attempts in total for a retryable request (1 = no retries).
    public var maxAttempts: Int
    /// First backoff delay in seconds; doubles per retry, with full jitter, capped at `maxBackoff`.
    public var baseBackoff: Double
    public var maxBackoff: Double
    /// Response statuses that are retried for idempotent requests (the body is discarded).
    public var retryStatuses: Set<Int>
    /// Consecutive backend failures that open a backend's circuit.
    public var breakerThreshold: Int
    /// How long an open circuit fails fast before it lets one probe through, in seconds.
    public var breakerCooldown: Double
    /// Verify TLS peers (turn off only for tests against self-signed emulators).
    public var verifyTLS: Bool
    /// Seconds one `send` may wait on the upstream in total, across its attempts and the backoff between them
    /// (nil: only the per-attempt limits of `UpstreamTimeouts` apply). Each attempt's connect and first-byte
    /// limits are cut to the time left, and a retry whose backoff would not fit is not made: the last answer
    /// or error stands. When an attempt's wait is cut short the error is `.timedOut` (a 504 for the gateway's
    /// callers) — unless an earlier attempt failed on its own (a refusal, an empty reply): then that failure
    /// stands, since the cut wait says only that the deadline came. Moving bodies is not waiting: the time
    /// spent sending a request body or streaming the response body is bounded by the idle limit instead, so a
    /// large transfer is never cut by this deadline.
    public var requestDeadline: Double?

    public init(
        maxConnectionsPerHost: Int = 256, maxIdleConnections: Int = 64, responseBufferBytes: Int = 256 * 1024,
        requestBufferBytes: Int = 256 * 1024, maxAttempts: Int = 3, baseBackoff: Double = 0.05,
        maxBackoff: Double = 1.0, retryStatuses: Set<Int> = [502, 503, 504], breakerThreshold: Int = 5,
        breakerCooldown: Double = 5, verifyTLS: Bool = true, requestDeadline: Double? = 30
    ) {
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxIdleConnections = maxIdleConnections
        self.responseBufferBytes = responseBufferBytes
        self.requestBufferBytes = requestBufferBytes
        self.maxAttempts = maxAttempts
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.retryStatuses = retryStatuses
        self.breakerThreshold = breakerThreshold
        self.breakerCooldown = breakerCooldown
        self.verifyTLS = verifyTLS
        self.requestDeadline = requestDeadline
    }
}
