import PortcullisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which mechanism tells the server's connections that their sockets are ready (docs/architecture.md).
///
/// Both drivers implement the same `EventLoop` contract and pass the same test suite; the choice changes
/// throughput and per-connection memory, never behaviour.
public enum EventLoopDriver: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Our own threads, one per core, each waiting in `epoll_wait` (Linux only): the fastest here.
    case epoll
    /// A serial `DispatchQueue` per loop with read/write `DispatchSource`s: runs wherever Dispatch does.
    case dispatch

    /// `epoll` where it exists, `dispatch` elsewhere.
    public static var platformDefault: EventLoopDriver {
        #if os(Linux)
        .epoll
        #else
        .dispatch
        #endif
    }

    /// Whether this platform has the driver's mechanism.
    public var isAvailable: Bool {
        switch self {
        case .dispatch: true
        case .epoll:
            #if os(Linux)
            true
            #else
            false
            #endif
        }
    }

    /// The drivers this platform has, the default first.
    public static var available: [EventLoopDriver] {
        [platformDefault] + allCases.filter { $0 != platformDefault && $0.isAvailable }
    }

    public var description: String { rawValue }
}

/// Readiness a channel asks its loop to report: the same as a loop's guests ask for theirs.
typealias IOInterest = SocketInterest

/// What a loop reports about a channel's descriptor. `failed` (hang-up or error) comes with whatever
/// interest the channel has: its next `read` or `send` then says what happened.
typealias Readiness = SocketReadiness

/// Driver-private bookkeeping kept in the channel itself, so a driver needs no table lookup to change a
/// registration (`setInterest` runs several times per request).
struct ChannelRegistration {
    /// The interest the channel last asked for, which the driver reports (Dispatch: its sources resumed).
    var applied: IOInterest = []
    /// epoll: the interest the set holds, which may keep a read the channel dropped (`ParkedRead`).
    var inSet: IOInterest = []
    /// Whatever else the driver keeps per channel (Dispatch: its sources); nil for epoll.
    var driverState: AnyObject?
}

/// Something a loop watches: a connection or the listener. Every method is called on its loop (the
/// conformers are confined to it, hence `Sendable` only so that loop jobs can carry them).
protocol EventLoopChannel: AnyObject, Sendable {
    /// The descriptor the loop watches. Owned by the channel, which closes it in `descriptorReleased`.
    var descriptor: Int32 { get }
    var registration: ChannelRegistration { get set }
    /// The descriptor is ready as `readiness` says (only for the interest the channel has).
    func handleReadiness(_ readiness: Readiness)
    /// Acts on every deadline at or before `now` and returns the next one (`.max`: none).
    func checkDeadlines(now: UInt64) -> UInt64
    /// Called once after `deregister`, when the driver no longer watches the descriptor. The channel closes
    /// it here (the epoll driver relies on the close to drop it from its set); a number reused after this
    /// cannot reach a stale watch.
    func descriptorReleased()
    /// The loop's batch of readiness and jobs is over: send what was held back for it (`sendAtEndOfBatch`).
    func sendHeldOutput()
}

extension EventLoopChannel {
    func sendHeldOutput() {}
}

/// The seam between the HTTP layer and a readiness mechanism: one loop is one thread of execution that runs
/// everything of the channels registered with it.
///
/// Contract, identical for every driver:
/// - **Serial and ordered.** Readiness callbacks, deadline sweeps and `execute`d jobs of one loop never run
///   concurrently, and jobs from one thread run in the order they were handed over. Every method but
///   `execute`, `now` and `coversCurrentThread` must be called on the loop.
/// - **Level-triggered interest.** A channel is told again while its socket stays ready and it keeps the
///   interest; with no interest it is told nothing (a hung-up peer cannot make the loop spin).
/// - **Deregistration ends delivery at once**; `descriptorReleased` follows later on the loop, never within
///   the callback that deregistered.
/// - **One deadline sweep per loop.** A channel reports its earliest deadline with `deadlineChanged`; when it
///   passes, the loop calls `checkDeadlines` on every channel (sweeps are at least a few milliseconds apart,
///   so a deadline may be met that late).
/// - **Held output.** A channel may hold what it has to send until the end of the loop's current batch
///   (`sendAtEndOfBatch`): a driver that says yes calls it back before it runs anything else.
/// - **In-place lookups.** The loop is an `InPlaceLookupPermit` covering its own thread: code it runs
///   synchronously may make the brief, bounded calls docs/architecture.md allows (see `InPlaceLookup`).
protocol EventLoop: InPlaceLookupPermit {
    /// Runs `job` on the loop after the current callback; wakes the loop if it waits. Any thread.
    func execute(_ job: @escaping @Sendable () -> Void)
    /// Starts watching `channel` (with no interest yet).
    func register(_ channel: any EventLoopChannel)
    /// Makes the loop report exactly `interest` for `channel` from now on.
    func setInterest(_ interest: IOInterest, for channel: any EventLoopChannel)
    /// Stops watching `channel`; its `descriptorReleased` runs later on the loop.
    func deregister(_ channel: any EventLoopChannel)
    /// A channel's earliest deadline is now `deadline` (the loop's clock, nanoseconds).
    func deadlineChanged(_ deadline: UInt64)
    /// The loop's clock: monotonic nanoseconds (`MonotonicClock` for the real drivers). Any thread.
    func now() -> UInt64
    /// This loop's slot in per-loop state (`LoopShard`); nil for a loop outside the process-wide groups.
    var shard: LoopShard? { get }
    /// The receive blocks this loop's idle connections gave back (`ReceiveBlockSpares`). Use on the loop.
    var receiveSpares: ReceiveBlockSpares { get }
    /// Runs `job` on the loop once the work of its current turn is done, before the loop waits for more: the
    /// place to write out what the turn's exchanges buffered (the access log). Call on the loop.
    func atEndOfTurn(_ job: @escaping @Sendable () -> Void)
    /// Asks the loop to call `channel.sendHeldOutput()` once the current batch — one `epoll_wait`'s readiness,
    /// or the jobs handed over since the last — is handled, before anything else runs. False when the driver
    /// has no batches (Dispatch: each readiness is its own callback), and the channel sends at once.
    func sendAtEndOfBatch(_ channel: any EventLoopChannel) -> Bool
    /// The executor the async work of this loop's exchanges prefers (`AsyncBridge`), so that it resumes here
    /// after a suspension instead of on Swift's global executor; nil: the global executor.
    var taskExecutor: (any TaskExecutor)? { get }
}

/// The channels that held output for the end of a loop's batch (`sendAtEndOfBatch`), kept by the loop. Shared by
/// the drivers that batch, so each ends a batch the same way. Confined to its loop.
final class HeldOutput {
    private var channels: [any EventLoopChannel] = []

    var count: Int { channels.count }

    func add(_ channel: any EventLoopChannel) {
        channels.append(channel)
    }

    /// Calls every channel that held output; one that holds again meanwhile (its next pipelined response) is
    /// called again in the same pass.
    func sendAll() {
        guard !channels.isEmpty else { return }
        var index = 0
        while index < channels.count {
            channels[index].sendHeldOutput()
            index += 1
        }
        channels.removeAll(keepingCapacity: true)
    }
}

/// The deadline sweep of both drivers: every channel acts on what has expired and reports its next deadline.
enum DeadlineSweep {
    /// Runs `checkDeadlines(now:)` on every channel of `channels` — a snapshot, so a channel that closes while
    /// checked may remove itself from the loop's live table — and returns when the next sweep is due: the
    /// earliest deadline reported, but no sooner than `coalescing` after `now` (`.max`: none), so a burst of
    /// deadlines costs a few sweeps, not one per channel.
    static func run<Key>(_ channels: [Key: any EventLoopChannel], now: UInt64, coalescing: UInt64) -> UInt64 {
        var next = UInt64.max
        for channel in channels.values {
            next = min(next, channel.checkDeadlines(now: now))
        }
        return next == .max ? .max : max(next, now &+ coalescing)
    }
}

/// The process's loops of one driver, one per core, created on first use and never stopped: every server in
/// the process shares them (as Dispatch's global queues are shared), so starting and stopping servers — tests
/// do it hundreds of times — never starts or strands threads.
final class EventLoopGroup: Sendable {
    let driver: EventLoopDriver
    let loops: [any EventLoop]

    init(driver: EventLoopDriver, loops: [any EventLoop]) {
        self.driver = driver
        self.loops = loops
    }

    static let coreCount = LoopShard.loopsPerGroup

    private static let dispatch = EventLoopGroup(
        driver: .dispatch,
        loops: (0..<coreCount).map {
            DispatchEventLoop(name: "portcullis.http.dispatch.\($0)", shard: LoopShard(group: 1, loop: $0))
        })

    #if os(Linux)
    private static let epoll = EventLoopGroup(
        driver: .epoll,
        loops: (0..<coreCount).map { EpollEventLoop(name: "pc-http-\($0)", shard: LoopShard(group: 0, loop: $0)) })
    #endif

    /// The shared group of `driver`; nil where the driver's mechanism does not exist.
    static func shared(_ driver: EventLoopDriver) -> EventLoopGroup? {
        switch driver {
        case .dispatch: return dispatch
        case .epoll:
            #if os(Linux)
            return epoll
            #else
            return nil
            #endif
        }
    }
}
