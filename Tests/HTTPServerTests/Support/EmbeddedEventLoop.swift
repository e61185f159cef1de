import PortcullisCore
import Synchronization

@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

/// An `EventLoop` the test drives by hand, after SwiftNIO's `EmbeddedEventLoop`: its clock moves only when
/// the test says (`advance(to:)`), readiness is polled only when the test says (`run()`), and jobs handed
/// over from other threads wait until then. Everything runs on the test's thread; nothing sleeps.
final class EmbeddedEventLoop: EventLoop, @unchecked Sendable {
    var taskExecutor: (any TaskExecutor)? { nil }

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let clock = Atomic<UInt64>(1_000_000_000)
    private let thread = pthread_self()
    private var channels: [ObjectIdentifier: any EventLoopChannel] = [:]
    private var released: [any EventLoopChannel] = []
    /// The earliest deadline any channel reported since the last sweep.
    private(set) var earliestDeadline: UInt64 = .max

    func execute(_ job: @escaping @Sendable () -> Void) { jobs.withLock { $0.append(job) } }
    func now() -> UInt64 { clock.load(ordering: .relaxed) }
    var coversCurrentThread: Bool { pthread_equal(pthread_self(), thread) != 0 }

    func register(_ channel: any EventLoopChannel) { channels[ObjectIdentifier(channel)] = channel }
    func setInterest(_ interest: IOInterest, for channel: any EventLoopChannel) {
        channel.registration.applied = interest
    }
    func deregister(_ channel: any EventLoopChannel) {
        channel.registration.applied = []
        channels[ObjectIdentifier(channel)] = nil
        released.append(channel)
    }
    func deadlineChanged(_ deadline: UInt64) { earliestDeadline = min(earliestDeadline, deadline) }
    let shard: LoopShard? = nil
    let receiveSpares = ReceiveBlockSpares()
    private var turnEnd: [@Sendable () -> Void] = []
    /// Channels whose output waits for the end of the batch, as on the epoll driver.
    let held = HeldOutput()
    func sendAtEndOfBatch(_ channel: any EventLoopChannel) -> Bool {
        held.add(channel)
        return true
    }

    func atEndOfTurn(_ job: @escaping @Sendable () -> Void) { turnEnd.append(job) }

    /// Moves the clock to `time` and lets every channel act on the deadlines that passed, then `run()`s.
    func advance(to time: UInt64) {
        clock.store(time, ordering: .relaxed)
        earliestDeadline = .max
        for channel in channels.values { earliestDeadline = min(earliestDeadline, channel.checkDeadlines(now: time)) }
        run()
    }

    func advance(by nanoseconds: UInt64) { advance(to: now() &+ nanoseconds) }

    /// Runs queued jobs and delivers the readiness `poll(2)` reports (level-triggered, as the real drivers do),
    /// each batch followed by the output held for it, until nothing more happens; then releases deregistered
    /// channels, as a loop does at the end of a turn.
    func run() {
        for _ in 0..<10_000 {
            let progressed = runBatch()
            sendHeld()
            if !progressed { break }
        }
        let done = released
        released.removeAll()
        for channel in done { channel.descriptorReleased() }
        let ends = turnEnd
        turnEnd.removeAll()
        for job in ends { job() }
    }

    /// One batch without its end: the queued jobs, then one pass of readiness. Output a channel held for the
    /// end of the batch stays held until `sendHeld()`. Returns whether anything ran.
    @discardableResult
    func runBatch() -> Bool {
        let pending = jobs.withLock { jobs -> [@Sendable () -> Void] in
            defer { jobs.removeAll() }
            return jobs
        }
        for job in pending { job() }
        var delivered = false
        for channel in Array(channels.values) where !channel.registration.applied.isEmpty {
            let readiness = Self.poll(channel.descriptor, channel.registration.applied)
            guard !readiness.isEmpty else { continue }
            channel.handleReadiness(readiness)
            delivered = true
        }
        return !pending.isEmpty || delivered
    }

    /// The end of a batch: every channel that held output sends it (those that hold again meanwhile too).
    func sendHeld() { held.sendAll() }

    private static func poll(_ fd: Int32, _ interest: IOInterest) -> Readiness {
        var entry = pollfd(fd: fd, events: 0, revents: 0)
        if interest.contains(.read) { entry.events |= Int16(POLLIN) }
        if interest.contains(.write) { entry.events |= Int16(POLLOUT) }
        guard Glibc.poll(&entry, 1, 0) == 1 else { return [] }
        var readiness: Readiness = []
        if entry.revents & Int16(POLLIN) != 0 { readiness.insert(.readable) }
        if entry.revents & Int16(POLLOUT) != 0 { readiness.insert(.writable) }
        if entry.revents & Int16(POLLHUP | POLLERR) != 0 { readiness.insert(.failed) }
        return readiness
    }
}

/// One connection on an `EmbeddedEventLoop`, over a socket pair: the test holds the client end and reads
/// and writes it without blocking.
final class EmbeddedConnection {
    let loop = EmbeddedEventLoop()
    let connection: HTTPConnection
    let core: ServerCore
    let client: Int32
    private var received: [UInt8] = []

    init(
        configure: (inout HTTPServerConfiguration) -> Void = { _ in }, responder: any HTTPResponder,
        tls: ((Int32) -> any TLSSession)? = nil
    ) {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configure(&configuration)
        var pair: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        for fd in pair { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        client = pair[1]
        core = ServerCore(
            configuration: configuration, responder: responder, logger: .disabled,
            group: EventLoopGroup(driver: .dispatch, loops: [loop]))
        connection = HTTPConnection(
            fd: pair[0], remoteAddress: "embedded", context: core, loop: loop, tls: tls.map { TLSChannel($0(pair[0])) })
        connection.start()
        loop.run()
    }

    deinit { close(client) }

    var state: ConnectionState { connection.state }
    var kind: ConnectionState.Kind { connection.state.kind }

    /// Writes `text` to the connection and lets the loop react.
    func send(_ text: String) {
        write(text)
        loop.run()
    }

    /// Writes `text` to the connection without letting the loop run.
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        let n = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        precondition(n == bytes.count, "the socket pair took \(n) of \(bytes.count) bytes")
    }

    /// Everything the connection has sent so far (drained from the socket), as text.
    func output() -> String {
        String(decoding: outputBytes(), as: UTF8.self)
    }

    /// Everything the connection has sent so far (drained from the socket).
    func outputBytes() -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received += chunk[0..<n]
        }
        defer { received = [] }
        return received
    }

    /// Whether the connection's end is closed: reading the client end gives end-of-stream (or a reset).
    func peerClosed() -> Bool {
        var byte: UInt8 = 0
        let n = recv(client, &byte, 1, Int32(MSG_PEEK))
        return n == 0 || (n < 0 && errno == ECONNRESET)
    }

    /// Half-closes the client's sending side (the server reads end-of-stream).
    func shutdownClient() {
        shutdown(client, Int32(SHUT_WR))
        loop.run()
    }
}
