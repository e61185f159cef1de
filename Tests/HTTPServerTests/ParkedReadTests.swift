import Dispatch
import PortcullisCore
import Synchronization
import Testing

@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

/// A read a channel drops stays in the epoll set until it brings an event; the channel hears only what it asked
/// for either way.
@Suite struct ParkedReadTests {
    // MARK: - Transitions

    @Test func droppingOnlyTheReadLeavesTheSetAsItIs() {
        #expect(ParkedRead.setInterest(inSet: .read, wanted: []) == nil)
        #expect(ParkedRead.setInterest(inSet: [.read, .write], wanted: .write) == nil)
        // Taking it back costs nothing either.
        #expect(ParkedRead.setInterest(inSet: .read, wanted: .read) == nil)
    }

    @Test func anyOtherChangeIsAppliedAtOnce() {
        #expect(ParkedRead.setInterest(inSet: [], wanted: .read) == .read)
        #expect(ParkedRead.setInterest(inSet: .read, wanted: .write) == .write)
        #expect(ParkedRead.setInterest(inSet: [.read, .write], wanted: .read) == .read)
        #expect(ParkedRead.setInterest(inSet: [.read, .write], wanted: []) == [])
        #expect(ParkedRead.setInterest(inSet: .write, wanted: []) == [])
        #expect(ParkedRead.setInterest(inSet: .read, wanted: [.read, .write]) == [.read, .write])
    }

    @Test func anEventOnAParkedReadRemovesItUnheard() {
        let quiet = ParkedRead.event(.readable, inSet: .read, wanted: [])
        #expect(quiet.setInterest == [])
        #expect(quiet.deliver == nil)
        let hangUp = ParkedRead.event([.readable, .failed], inSet: .read, wanted: [])
        #expect(hangUp.setInterest == [])
        #expect(hangUp.deliver == nil)
    }

    @Test func aChannelStillWritingHearsItsWriteAndHangUpsOnly() {
        let readable = ParkedRead.event(.readable, inSet: [.read, .write], wanted: .write)
        #expect(readable.setInterest == .write)
        #expect(readable.deliver == nil)
        let both = ParkedRead.event([.readable, .writable], inSet: [.read, .write], wanted: .write)
        #expect(both.deliver == .writable)
        let failed = ParkedRead.event([.readable, .failed, .errorReported], inSet: [.read, .write], wanted: .write)
        #expect(failed.deliver == [.failed, .errorReported])
    }

    @Test func aSetInLineWithTheChannelPassesEventsThrough() {
        let event = ParkedRead.event([.readable, .failed], inSet: .read, wanted: .read)
        #expect(event.setInterest == nil)
        #expect(event.deliver == [.readable, .failed])
    }

    // MARK: - On the epoll loop

    /// A socket pair's end watched by the loop: records what it hears and reads what is there.
    final class Probe: EventLoopChannel, @unchecked Sendable {
        let descriptor: Int32
        var registration = ChannelRegistration()
        let heard = Mutex<[Readiness]>([])
        let received = Mutex<[UInt8]>([])

        init(descriptor: Int32) { self.descriptor = descriptor }

        func handleReadiness(_ readiness: Readiness) {
            heard.withLock { $0.append(readiness) }
            guard readiness.contains(.readable) else { return }
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                received.withLock { $0.append(contentsOf: buffer[..<n]) }
            }
        }

        func checkDeadlines(now: UInt64) -> UInt64 { .max }
        func descriptorReleased() { close(descriptor) }
    }

    /// Runs `body` on the loop and waits for it.
    static func onLoop<T: Sendable>(_ loop: any EventLoop, _ body: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        loop.execute {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    static func waitUntil(_ condition: () -> Bool) -> Bool {
        let end = MonotonicClock.nanoseconds() + 5_000_000_000
        while !condition() {
            if MonotonicClock.nanoseconds() > end { return false }
            usleep(1000)
        }
        return true
    }

    @Test func theLoopParksAReadAndTheChannelHearsOnlyWhatItAsked() async throws {
        #if os(Linux)
        let loop = try #require(EventLoopGroup.shared(.epoll)).loops[0]
        try await blocking {
            var pair: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
            let probe = Probe(descriptor: pair[0])
            let peer = pair[1]
            defer { close(peer) }
            func send(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { write(peer, $0.baseAddress, $0.count) } }
            func turns() { for _ in 0..<2 { Self.onLoop(loop) {} } }

            Self.onLoop(loop) {
                loop.register(probe)
                loop.setInterest(.read, for: probe)
            }
            send("a")
            #expect(Self.waitUntil { probe.received.withLock { $0 } == Array("a".utf8) })

            // Dropped: parked in the set, so a data event comes, is not heard, and removes it.
            let parked = Self.onLoop(loop) {
                loop.setInterest([], for: probe)
                return probe.registration.inSet
            }
            #expect(parked == .read)
            let heardBefore = probe.heard.withLock { $0.count }
            send("b")
            turns()
            #expect(probe.heard.withLock { $0.count } == heardBefore)
            #expect(Self.onLoop(loop) { probe.registration.inSet } == [])

            // Taken back: the byte that waited is heard.
            Self.onLoop(loop) { loop.setInterest(.read, for: probe) }
            #expect(Self.waitUntil { probe.received.withLock { $0 } == Array("ab".utf8) })

            // Dropped and taken back with nothing in between: the set never changed.
            let sets = Self.onLoop(loop) { () -> [IOInterest] in
                loop.setInterest([], for: probe)
                let whileDropped = probe.registration.inSet
                loop.setInterest(.read, for: probe)
                return [whileDropped, probe.registration.inSet]
            }
            #expect(sets == [.read, .read])
            send("c")
            #expect(Self.waitUntil { probe.received.withLock { $0 } == Array("abc".utf8) })
            Self.onLoop(loop) { loop.deregister(probe) }
        }
        #endif
    }
}
