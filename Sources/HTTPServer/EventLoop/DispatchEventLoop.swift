import Dispatch
import PortcullisCore

/// The Dispatch driver of `EventLoop`: a serial `DispatchQueue` per loop, a read and a write
/// `DispatchSource` per channel (resumed exactly while the channel has that interest), and one Dispatch
/// timer per loop for the deadline sweep. Portable — it runs wherever Dispatch does, macOS included;
/// on Linux it costs more CPU per request than the epoll driver (Dispatch's manager thread fetches every
/// event and hands it to the queue) and more memory per idle connection (its sources and handlers).
///
/// A channel's write source is created on its first write interest: most connections never wait for a full
/// socket, and an unused source still costs the manager thread work. Deregistering cancels the sources; the
/// channel's `descriptorReleased` runs from the last cancel handler, so the descriptor is closed only when
/// Dispatch no longer watches it.
///
/// Everything but `execute`, `now` and `coversCurrentThread` runs on `queue` (hence `@unchecked Sendable`).
final class DispatchEventLoop: EventLoop, @unchecked Sendable {
    let queue: DispatchQueue
    private let timer: any DispatchSourceTimer
    private static let identity = DispatchSpecificKey<ObjectIdentifier>()
    /// Marks `queue` as this loop's, for `coversCurrentThread`.
    private let mark = Mark()
    private final class Mark: Sendable {}

    // Confined to `queue`.
    private var channels: [ObjectIdentifier: any EventLoopChannel] = [:]
    /// When the timer is set to fire; re-armed only when a deadline moves earlier.
    private var firesAt: UInt64 = .max
    private let coalescing: UInt64
    let shard: LoopShard?
    let receiveSpares = ReceiveBlockSpares()

    init(name: String, shard: LoopShard? = nil, coalescing: UInt64 = 10_000_000) {
        queue = DispatchQueue(label: name, target: .global())
        self.shard = shard
        self.coalescing = coalescing
        queue.setSpecific(key: Self.identity, value: ObjectIdentifier(mark))
        queue.setSpecific(key: EventLoopThreads.queueKey, value: true)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in self.sweep() }
        timer.schedule(deadline: .distantFuture)
        timer.activate()
    }

    // MARK: - Any thread

    func execute(_ job: @escaping @Sendable () -> Void) {
        queue.async(execute: job)
    }

    func now() -> UInt64 { MonotonicClock.nanoseconds() }

    /// Each readiness is its own block on the queue: there is no batch to hold output for.
    func sendAtEndOfBatch(_ channel: any EventLoopChannel) -> Bool { false }

    /// None: exchanges resume on the global executor, which the queue's blocks already share.
    var taskExecutor: (any TaskExecutor)? { nil }

    /// A serial queue has no turns of its own: the job is queued behind every block already on the queue, so
    /// what those blocks add before it runs is handled with it.
    func atEndOfTurn(_ job: @escaping @Sendable () -> Void) {
        queue.async(execute: job)
    }

    /// True inside a block running on `queue`, whichever worker thread runs it.
    var coversCurrentThread: Bool { DispatchQueue.getSpecific(key: Self.identity) == ObjectIdentifier(mark) }

    // MARK: - Loop queue

    /// A channel's sources; confined to the queue (hence `@unchecked Sendable`: only queue jobs carry it).
    private final class Sources: @unchecked Sendable {
        var read: (any DispatchSourceRead)?
        var write: (any DispatchSourceWrite)?
        var cancelsPending = 0
        /// The read source reported the end of input (its data is 0: a FIN, or a hang-up). After a hang-up
        /// Dispatch stops watching the descriptor for good, so from then on the loop reports readability
        /// itself while the channel wants it (see `redeliverEnd`).
        var ended = false
        var redeliveryQueued = false
    }

    func register(_ channel: any EventLoopChannel) {
        channels[ObjectIdentifier(channel)] = channel
        channel.registration = ChannelRegistration(applied: [], driverState: Sources())
    }

    func setInterest(_ interest: IOInterest, for channel: any EventLoopChannel) {
        let old = channel.registration.applied
        guard old != interest, let state = channel.registration.driverState else { return }
        let sources = unsafeDowncast(state, to: Sources.self)
        channel.registration.applied = interest
        if interest.contains(.read) != old.contains(.read) {
            if interest.contains(.read) {
                if let source = sources.read {
                    source.resume()
                } else {
                    let source = DispatchSource.makeReadSource(fileDescriptor: channel.descriptor, queue: queue)
                    // Strong: the channel lives while it is watched; cancelling the source releases the handler.
                    source.setEventHandler { [self] in
                        if source.data == 0 { sources.ended = true }
                        channel.handleReadiness(sources.ended ? [.readable, .failed] : .readable)
                        redeliverEnd(to: channel, sources)
                    }
                    sources.read = source
                    source.activate()
                }
                redeliverEnd(to: channel, sources)
            } else {
                sources.read?.suspend()
            }
        }
        if interest.contains(.write) != old.contains(.write) {
            if interest.contains(.write) {
                if let source = sources.write {
                    source.resume()
                } else {
                    let source = DispatchSource.makeWriteSource(fileDescriptor: channel.descriptor, queue: queue)
                    source.setEventHandler { channel.handleReadiness(.writable) }
                    sources.write = source
                    source.activate()
                }
            } else {
                sources.write?.suspend()
            }
        }
    }

    /// Level-triggered readability after the end of input, which Dispatch reports only once: while the
    /// channel still wants to read, it is told again (after other work of the loop), until its reads see the
    /// end and it stops asking — what epoll does by itself for a hung-up descriptor.
    private func redeliverEnd(to channel: any EventLoopChannel, _ sources: Sources) {
        guard sources.ended, !sources.redeliveryQueued, channel.registration.applied.contains(.read) else { return }
        sources.redeliveryQueued = true
        queue.async { [self] in
            sources.redeliveryQueued = false
            guard channel.registration.driverState === sources, channel.registration.applied.contains(.read) else {
                return
            }
            channel.handleReadiness([.readable, .failed])
            redeliverEnd(to: channel, sources)
        }
    }

    func deregister(_ channel: any EventLoopChannel) {
        channels[ObjectIdentifier(channel)] = nil
        let applied = channel.registration.applied
        guard let state = channel.registration.driverState else { return }
        let sources = unsafeDowncast(state, to: Sources.self)
        channel.registration = ChannelRegistration()
        var watching: [(source: any DispatchSourceProtocol, resumed: Bool)] = []
        if let read = sources.read { watching.append((read, applied.contains(.read))) }
        if let write = sources.write { watching.append((write, applied.contains(.write))) }
        guard !watching.isEmpty else {
            queue.async { channel.descriptorReleased() }
            return
        }
        sources.cancelsPending = watching.count
        for (source, resumed) in watching {
            source.setCancelHandler {
                sources.cancelsPending -= 1
                if sources.cancelsPending == 0 { channel.descriptorReleased() }
            }
            source.cancel()
            // A suspended source delivers its cancellation only once resumed (no event follows a cancel).
            if !resumed { source.resume() }
        }
    }

    func deadlineChanged(_ deadline: UInt64) {
        guard deadline < firesAt else { return }
        schedule(deadline)
    }

    private func schedule(_ deadline: UInt64) {
        firesAt = deadline
        guard deadline != .max else {
            timer.schedule(deadline: .distantFuture)
            return
        }
        let now = MonotonicClock.nanoseconds()
        timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: deadline > now ? deadline - now : 0)))
    }

    private func sweep() {
        let now = MonotonicClock.nanoseconds()
        firesAt = .max
        let next = DeadlineSweep.run(channels, now: now, coalescing: coalescing)
        // Deadlines set during the sweep went through `deadlineChanged` and may be earlier.
        if next < firesAt { schedule(next) }
    }
}
