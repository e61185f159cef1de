/// Every way an upstream call fails (the one error type of the Upstream module).
public enum UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which deadline passed.
    public enum Phase: String, Sendable, Equatable {
        case connect, firstByte, idle
    }

    /// DNS, TCP or TLS failure: the request never reached the server.
    case connectFailed(String)
    case timedOut(Phase)
    /// The exchange broke after it started (reset, malformed response, upstream cut the body).
    case transfer(String)
    /// The caller cancelled (task cancellation or cancelling the body stream).
    case cancelled
    /// The buffered response exceeded the caller's limit.
    case tooLarge(limit: Int)
    /// The request body stream failed; the request was aborted.
    case requestBodyFailed(String)
    /// Too many recent failures of this backend: fail fast; retry after this many seconds.
    case circuitOpen(retryAfter: Int)
    /// The request could not be set up (bad URL, unsupported option).
    case invalidRequest(String)

    public var description: String {
        switch self {
        case .connectFailed(let why): "upstream connection failed: \(why)"
        case .timedOut(let phase): "upstream timed out (\(phase.rawValue))"
        case .transfer(let why): "upstream transfer failed: \(why)"
        case .cancelled: "upstream request cancelled"
        case .tooLarge(let limit): "upstream response larger than \(limit) bytes"
        case .requestBodyFailed(let why): "request body failed: \(why)"
        case .circuitOpen(let retryAfter): "upstream circuit open; retry after \(retryAfter) s"
        case .invalidRequest(let why): "invalid upstream request: \(why)"
        }
    }

    /// Whether the failure says the upstream is unhealthy (counts against the circuit breaker).
    var countsAsBackendFailure: Bool {
        switch self {
        case .connectFailed, .timedOut, .transfer: true
        default: false
        }
    }

    /// Metric label for a failed attempt.
    var metricLabel: String {
        switch self {
        case .connectFailed: "connect_error"
        case .timedOut: "timeout"
        case .transfer: "transfer_error"
        case .cancelled: "cancelled"
        case .tooLarge: "too_large"
        case .requestBodyFailed: "body_error"
        case .circuitOpen: "circuit_open"
        case .invalidRequest: "invalid"
        }
    }
}
