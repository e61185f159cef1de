/// The lifecycle of one connection: ONE state at a time, each naming what it owns.
///
/// ```
///                       accept
///                         │
///                         ▼
///      ┌────────────▶ readingHead ────── bad head, 408 ──────▶ closingAfterWrite
///      │                  │                                            │ written
///      │                  │ head                                       ▼
///      │ body complete    ▼           `Connection: close`          lingering
///      ├─────────────── exchanging ──────────────────────────────────▶ ▲  │
///      │                  │ response written, body bytes left          │  │ peer closed, 1 MiB,
///      │                  ▼                          server drain      │  │ linger time
///      └─────────────── drainingBody ──────────────────────────────────┘  ▼
///        drained                                                        closed
///
///   any state → closed: silence (first head, idle), peer gone, send error, write stall, abort
/// ```
///
/// | state | owns | deadline | reads | writes |
/// |---|---|---|---|---|
/// | `readingHead` | the parser once a head began | first head / partial head: header timeout; between requests: idle timeout | yes | no |
/// | `exchanging` | the `Exchange`: request body (parser, pending pull), response producer, output | body timeout while a pull waits; write timeout while the socket refuses bytes | while a pull waits | while output waits |
/// | `drainingBody` | the parser in the unread body, bytes drained | body timeout | yes | no |
/// | `closingAfterWrite` | the error response's output | write timeout while the socket refuses bytes | no | while output waits |
/// | `lingering` | bytes discarded | linger time | yes (discarded) | no (shut down) |
/// | `closed` | nothing; the descriptor is closed once the loop releases it (`descriptorReleased`) | — | no | no |
///
/// Interest and the next deadline are derived from the state (`interest(endOfInput:)`, `nextDeadline`), so
/// they cannot disagree with it; what happens when a deadline passes is `expiry(now:)`. Every change goes
/// through `HTTPConnection.transition(to:)` (`allows(from:to:)` lists the diagram's edges; any other is a
/// `preconditionFailure`), or `update(_:)` for a new payload of the same state.
enum ConnectionState {
    case readingHead(HeadReading)
    case exchanging(Exchange)
    case drainingBody(BodyDrain)
    case closingAfterWrite(ErrorResponse)
    case lingering(Linger)
    case closed

    enum Kind: Equatable, CustomStringConvertible {
        case readingHead, exchanging, drainingBody, closingAfterWrite, lingering, closed

        var description: String {
            switch self {
            case .readingHead: "readingHead"
            case .exchanging: "exchanging"
            case .drainingBody: "drainingBody"
            case .closingAfterWrite: "closingAfterWrite"
            case .lingering: "lingering"
            case .closed: "closed"
            }
        }
    }

    var kind: Kind {
        switch self {
        case .readingHead: .readingHead
        case .exchanging: .exchanging
        case .drainingBody: .drainingBody
        case .closingAfterWrite: .closingAfterWrite
        case .lingering: .lingering
        case .closed: .closed
        }
    }

    /// The edges of the diagram. `closed` is reachable from everywhere (aborts), and nothing leaves it.
    static func allows(from old: Kind, to new: Kind) -> Bool {
        switch (old, new) {
        case (.closed, _): false
        case (_, .closed): true
        case (.readingHead, .exchanging), (.readingHead, .closingAfterWrite): true
        case (.exchanging, .readingHead), (.exchanging, .drainingBody), (.exchanging, .lingering): true
        case (.drainingBody, .readingHead), (.drainingBody, .lingering): true
        case (.closingAfterWrite, .lingering): true
        default: false
        }
    }
}

/// `readingHead`: waiting for a request head, or for the rest of one.
struct HeadReading {
    enum Wait: Equatable {
        /// A new connection: its first head must arrive within the header timeout, counted from the accept;
        /// a connection that sends nothing at all is closed silently.
        case firstHead
        /// Between requests: a keep-alive connection that stays silent for the idle timeout is closed
        /// silently.
        case idle
        /// A head has begun: it must be complete by the deadline (the slowloris defence), else 408.
        case partialHead
    }

    var wait: Wait
    var deadline: UInt64
    /// Created with the first byte of a head: an idle connection holds no parser (bench S7).
    var parser: ParserBox?
    /// The server is draining: the request being read is the last one (answered with `Connection: close`).
    var lastRequest = false
}

/// `drainingBody`: the response is written; the rest of an unread request body is read and discarded (up
/// to `maxDrainBodyBytes`) so the connection can serve the next request.
struct BodyDrain {
    let parser: ParserBox
    var drained: Int64 = 0
    var deadline: UInt64
}

/// `closingAfterWrite`: the server answers a bad or timed-out request itself and closes once it is written.
final class ErrorResponse {
    var output: SendBuffer
    init(output: SendBuffer) { self.output = output }
}

/// `lingering`: our side is shut down; what the peer still sends is discarded until it closes, 1 MiB arrived
/// or the linger time passes — so it reads our last response instead of a reset.
struct Linger {
    var discarded = 0
    var deadline: UInt64
}

/// The parser, boxed so states can hand it on without copying its ~250 bytes (and an idle connection can
/// hold none).
final class ParserBox {
    var parser: HTTPRequestParser
    init(_ parser: HTTPRequestParser) { self.parser = parser }
}

/// What the connection must do when a deadline passes.
enum Expiry: Equatable {
    /// Close without a word: a silent new connection, an idle keep-alive one, the end of lingering, a
    /// body that stopped coming while it was drained.
    case close
    /// A head did not complete in time: answer 408 and close.
    case requestTimeout
    /// The responder's body pull waited too long: fail it (`ByteStreamError.timedOut`).
    case bodyTimeout
    /// The socket accepted none of our bytes for the write timeout: abort (reset).
    case writeStall
}

extension ConnectionState {
    /// What to do at `now`, or nil while no deadline has passed. Pure: the clock is the caller's.
    func expiry(now: UInt64) -> Expiry? {
        switch self {
        case .readingHead(let reading):
            guard now >= reading.deadline else { return nil }
            return reading.wait == .partialHead ? .requestTimeout : .close
        case .exchanging(let exchange):
            if now >= exchange.output.stallDeadline { return .writeStall }
            if case .pulling(_, _, let deadline) = exchange.body, now >= deadline { return .bodyTimeout }
            return nil
        case .drainingBody(let drain):
            return now >= drain.deadline ? .close : nil
        case .closingAfterWrite(let response):
            return now >= response.output.stallDeadline ? .writeStall : nil
        case .lingering(let linger):
            return now >= linger.deadline ? .close : nil
        case .closed:
            return nil
        }
    }

    /// The earliest deadline of this state (`.max`: none).
    var nextDeadline: UInt64 {
        switch self {
        case .readingHead(let reading): return reading.deadline
        case .exchanging(let exchange):
            if case .pulling(_, _, let deadline) = exchange.body { return min(deadline, exchange.output.stallDeadline) }
            return exchange.output.stallDeadline
        case .drainingBody(let drain): return drain.deadline
        case .closingAfterWrite(let response): return response.output.stallDeadline
        case .lingering(let linger): return linger.deadline
        case .closed: return .max
        }
    }

    /// What the socket must report in this state. Reading stops while a response is outstanding and no pull
    /// waits (backpressure; pipelined requests wait in the kernel), and once the peer has closed its side.
    func interest(endOfInput: Bool) -> IOInterest {
        var interest: IOInterest = []
        switch self {
        case .readingHead, .drainingBody, .lingering:
            if !endOfInput { interest.insert(.read) }
        case .exchanging(let exchange):
            if !endOfInput, case .pulling = exchange.body { interest.insert(.read) }
            if exchange.output.isStalled { interest.insert(.write) }
        case .closingAfterWrite(let response):
            if response.output.isStalled { interest.insert(.write) }
        case .closed:
            break
        }
        return interest
    }
}

/// The connection's timeouts in nanoseconds, converted once (read on every request).
struct ConnectionTimeouts: Sendable {
    var headerRead, idle, bodyRead, write, linger: UInt64

    init(_ timeouts: HTTPServerTimeouts) {
        headerRead = timeouts.headerRead.nanoseconds
        idle = timeouts.idle.nanoseconds
        bodyRead = timeouts.bodyRead.nanoseconds
        write = timeouts.write.nanoseconds
        linger = timeouts.lingeringClose.nanoseconds
    }
}
