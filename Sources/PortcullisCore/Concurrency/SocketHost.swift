#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a guest asks its host to watch a socket for.
public struct SocketInterest: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let read = SocketInterest(rawValue: 1)
    public static let write = SocketInterest(rawValue: 2)
}

/// What a loop reports about a socket. `failed` (hang-up or error) comes with whatever interest is asked for;
/// `errorReported` says the error part of it (a guest that tells its library about errors apart from hang-ups).
public struct SocketReadiness: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let readable = SocketReadiness(rawValue: 1)
    public static let writable = SocketReadiness(rawValue: 2)
    public static let failed = SocketReadiness(rawValue: 4)
    public static let errorReported = SocketReadiness(rawValue: 8)
}

/// Code that drives sockets of its own — curl's multi handle — on an event loop it does not own (a `SocketHost`).
///
/// Why guests exist: a proxied request whose upstream transfer runs on another thread than its client connection
/// crosses threads twice (out to the transfer, back with the head and with every body chunk). Hosted on the
/// connection's own loop, the transfer's readiness, callbacks and the exchange awaiting it all run on one thread.
///
/// Every method is called on the host's thread.
public protocol SocketGuest: AnyObject {
    /// A socket the guest watches is ready as `readiness` says.
    func socketReady(_ descriptor: Int32, _ readiness: SocketReadiness)
    /// Runs whatever of the guest is due at `now` and returns its next deadline (`.max`: none).
    func runDeadlines(now: UInt64) -> UInt64
    /// The host finished a readiness batch (or a run of jobs): no event of that batch can still name a socket,
    /// so descriptors the guest gave up may be closed now, and a guest asked to stop may leave.
    func turnEnded()
}

/// An event loop that runs guests beside its own work: it watches their sockets level-triggered with exactly
/// the interest they ask for, wakes for their deadlines on time (no coalescing: curl's timers are milliseconds),
/// and tells them when each turn ends.
///
/// Threading: `execute` and `coversCurrentThread` from any thread; everything else on the host's thread.
public protocol SocketHost: AnyObject, Sendable {
    /// Runs `job` on the host after the current callback; wakes it if it waits.
    func execute(_ job: @escaping @Sendable () -> Void)
    var coversCurrentThread: Bool { get }
    /// The host's clock (monotonic nanoseconds) when its current turn began: what per-chunk callbacks read
    /// instead of the clock itself.
    var turnTime: UInt64 { get }
    /// Starts running `guest`'s deadlines and turn ends. A guest is attached at most once.
    func attach(_ guest: any SocketGuest)
    /// Stops running `guest`; it must watch no socket any more.
    func detach(_ guest: any SocketGuest)
    /// Makes the host report exactly `interest` for `descriptor` to `guest` from now on; empty: stop watching it.
    func watch(_ descriptor: Int32, _ interest: SocketInterest, for guest: any SocketGuest)
    /// A guest's earliest deadline is now `deadline`: the host calls every guest's `runDeadlines` once it passes.
    func guestDeadlineChanged(_ deadline: UInt64)
}

/// The host each thread runs, if any: a host's thread names itself here when it starts, so code on that thread
/// (an exchange starting an upstream transfer) can become its guest instead of handing work to another thread.
public enum SocketHosts {
    /// Names `host` as the calling thread's for the rest of the thread's life.
    public static func markCurrentThread(_ host: any SocketHost) {
        let box = Unmanaged.passRetained(HostBox(host)).toOpaque()
        _ = pthread_setspecific(threadKey.key, box)
    }

    /// The host whose thread is the calling one; nil on any other thread.
    public static var current: (any SocketHost)? {
        guard let box = pthread_getspecific(threadKey.key) else { return nil }
        return Unmanaged<HostBox>.fromOpaque(box).takeUnretainedValue().host
    }

    private final class HostBox {
        let host: any SocketHost
        init(_ host: any SocketHost) { self.host = host }
    }

    private static let threadKey = ThreadKey()

    private final class ThreadKey: Sendable {
        let key: pthread_key_t
        init() {
            var key = pthread_key_t()
            // A thread that exits releases its box (a host thread that stops).
            #if canImport(Darwin)
            let destructor: @convention(c) (UnsafeMutableRawPointer) -> Void = { box in
                Unmanaged<AnyObject>.fromOpaque(box).release()
            }
            #else
            let destructor: @convention(c) (UnsafeMutableRawPointer?) -> Void = { box in
                if let box { Unmanaged<AnyObject>.fromOpaque(box).release() }
            }
            #endif
            guard pthread_key_create(&key, destructor) == 0 else { preconditionFailure("pthread_key_create failed") }
            self.key = key
        }
    }
}

/// The guests a host runs and the sockets they watch: the bookkeeping every `SocketHost` shares, with the
/// readiness mechanism left to the host (`watch` says what it must change in its set). Confined to the host's
/// thread; a class, because guests call back into it (`guestDeadlineChanged`) while it runs them.
public final class GuestTable {
    /// What a host must do to its readiness set after `watch`.
    public enum Change {
        case none, add, modify, remove

        /// The set operation that takes a descriptor's interest from `old` to `new`.
        public init(from old: SocketInterest, to new: SocketInterest) {
            if old == new {
                self = .none
            } else {
                self = old.isEmpty ? .add : (new.isEmpty ? .remove : .modify)
            }
        }
    }

    private var guests: [any SocketGuest] = []
    private var sockets: [Int32: (guest: any SocketGuest, interest: SocketInterest)] = [:]
    /// When the guests' earliest deadline passes (`.max`: none); not coalesced like a host's own sweeps.
    public private(set) var firesAt: UInt64 = .max

    public init() {}

    public var isEmpty: Bool { guests.isEmpty }

    public func attach(_ guest: any SocketGuest) {
        guests.append(guest)
    }

    public func detach(_ guest: any SocketGuest) {
        guests.removeAll { $0 === guest }
    }

    /// Records that `guest` wants `interest` reported for `descriptor` (empty: nothing more).
    public func watch(_ descriptor: Int32, _ interest: SocketInterest, for guest: any SocketGuest) -> Change {
        let change = Change(from: sockets[descriptor]?.interest ?? [], to: interest)
        if change != .none { sockets[descriptor] = interest.isEmpty ? nil : (guest, interest) }
        return change
    }

    /// The guest watching `descriptor`; nil when none does (any more).
    public func guest(watching descriptor: Int32) -> (any SocketGuest)? {
        sockets[descriptor]?.guest
    }

    public func deadlineChanged(_ deadline: UInt64) {
        if deadline < firesAt { firesAt = deadline }
    }

    /// Runs every guest's deadlines once the earliest has passed at `now`.
    public func runDeadlines(now: UInt64) {
        guard now >= firesAt else { return }
        firesAt = .max
        var next = UInt64.max
        for guest in guests { next = min(next, guest.runDeadlines(now: now)) }
        // Deadlines set meanwhile went through `deadlineChanged` and may be earlier.
        firesAt = min(firesAt, next)
    }

    /// Tells every guest its host's turn ended.
    public func endTurns() {
        guard !guests.isEmpty else { return }
        for guest in guests { guest.turnEnded() }
    }
}
