import PortcullisCore
import Synchronization
import Testing

/// The pieces every epoll loop of ours shares: the hand-over inbox and the guest table (pure, no threads).
@Suite struct LoopHostingTests {
    final class Wakes: Sendable {
        let count = Atomic(0)
    }

    @Test func aHandOverWakesTheLoopOnlyWhenItSleeps() {
        let wakes = Wakes()
        let inbox = LoopInbox(wake: { wakes.count.add(1, ordering: .relaxed) })
        inbox.execute {}
        #expect(wakes.count.load(ordering: .relaxed) == 0)  // running: it will take the job anyway
        // Work is waiting: no sleep.
        #expect(inbox.prepareToSleep(idle: true) == (block: false, exit: false))
        var jobs: [@Sendable () -> Void] = []
        var tasks: [UnownedJob] = []
        inbox.take(&jobs, &tasks)
        #expect(jobs.count == 1 && tasks.isEmpty)
        jobs.removeAll()
        #expect(inbox.prepareToSleep(idle: true) == (block: true, exit: false))
        inbox.execute {}
        inbox.execute {}
        #expect(wakes.count.load(ordering: .relaxed) == 1)  // one wake for the sleep, however many jobs
        inbox.awoke()
        inbox.take(&jobs, &tasks)
        #expect(jobs.count == 2)
    }

    @Test func aStoppedLoopLeavesOnlyWhenIdleAndWithNothingHandedOver() {
        let wakes = Wakes()
        let inbox = LoopInbox(wake: { wakes.count.add(1, ordering: .relaxed) })
        #expect(inbox.prepareToSleep(idle: true) == (block: true, exit: false))
        inbox.requestStop()
        #expect(wakes.count.load(ordering: .relaxed) == 1)
        inbox.awoke()
        #expect(inbox.prepareToSleep(idle: false) == (block: true, exit: false))
        inbox.awoke()
        inbox.execute {}
        #expect(inbox.prepareToSleep(idle: true) == (block: false, exit: false))
        var jobs: [@Sendable () -> Void] = []
        var tasks: [UnownedJob] = []
        inbox.take(&jobs, &tasks)
        #expect(inbox.prepareToSleep(idle: true) == (block: false, exit: true))
    }

    /// A guest that records what its host tells it, and asks for a deadline of its own while its deadlines run.
    final class Guest: SocketGuest {
        var ready: [(Int32, SocketReadiness)] = []
        var ran: [UInt64] = []
        var turns = 0
        var next: UInt64 = .max
        var table: GuestTable?
        var askDuringRun: UInt64?

        func socketReady(_ descriptor: Int32, _ readiness: SocketReadiness) { ready.append((descriptor, readiness)) }
        func runDeadlines(now: UInt64) -> UInt64 {
            ran.append(now)
            if let ask = askDuringRun { table?.deadlineChanged(ask) }
            return next
        }
        func turnEnded() { turns += 1 }
    }

    @Test func setOperations() {
        #expect(GuestTable.Change(from: [], to: .read) == .add)
        #expect(GuestTable.Change(from: .read, to: []) == .remove)
        #expect(GuestTable.Change(from: .read, to: .write) == .modify)
        #expect(GuestTable.Change(from: .read, to: .read) == .none)
    }

    @Test func watchSaysWhatTheHostMustChange() {
        let table = GuestTable()
        let guest = Guest()
        table.attach(guest)
        #expect(table.watch(7, [], for: guest) == .none)
        #expect(table.watch(7, .read, for: guest) == .add)
        #expect(table.guest(watching: 7) === guest)
        #expect(table.watch(7, .read, for: guest) == .none)
        #expect(table.watch(7, [.read, .write], for: guest) == .modify)
        #expect(table.watch(7, [], for: guest) == .remove)
        #expect(table.guest(watching: 7) == nil)
        #expect(table.watch(7, [], for: guest) == .none)
    }

    @Test func deadlinesRunOnceDueAndTheEarliestAnswerWins() {
        let table = GuestTable()
        let first = Guest()
        let second = Guest()
        first.table = table
        table.attach(first)
        table.attach(second)
        #expect(table.firesAt == .max)
        table.deadlineChanged(100)
        table.deadlineChanged(150)
        #expect(table.firesAt == 100)
        table.runDeadlines(now: 99)
        #expect(first.ran.isEmpty && second.ran.isEmpty)
        first.next = 300
        second.next = 250
        first.askDuringRun = 120  // set while running: earlier than either answer
        table.runDeadlines(now: 100)
        #expect(first.ran == [100] && second.ran == [100])
        #expect(table.firesAt == 120)
        first.askDuringRun = nil
        table.runDeadlines(now: 120)
        #expect(table.firesAt == 250)
        table.detach(second)
        table.runDeadlines(now: 260)
        #expect(second.ran == [100, 120])
        #expect(first.ran == [100, 120, 260])
        #expect(table.firesAt == 300)
        table.endTurns()
        #expect(first.turns == 1 && second.turns == 0)
        table.detach(first)
        #expect(table.isEmpty)
    }
}
