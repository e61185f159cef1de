import Dispatch
import PortcullisCore
import Synchronization
import Testing

@testable import HTTPServer

#if canImport(Glibc)
import Glibc
#endif

/// The loop contract both drivers keep: jobs handed over from other threads, the in-place permit, and the
/// loops' process-wide lifetime.
@Suite(.serialized) struct EventLoopTests {
    /// Jobs from many threads all run, one at a time, on the loop, each producer's jobs in the order given;
    /// inside them the loop's permit covers the running thread, outside it does not.
    @Test(arguments: EventLoopDriver.available)
    func jobsFromOtherThreadsRunInOrderOnTheLoop(driver: EventLoopDriver) async throws {
        let loop = try #require(EventLoopGroup.shared(driver)).loops[0]
        let producers = 8, perProducer = 2000
        struct Seen { var next = [Int](repeating: 0, count: 8); var outOfOrder = 0; var uncovered = 0; var done = 0 }
        let seen = Mutex(Seen())
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        try await blocking {
            DispatchQueue.concurrentPerform(iterations: producers) { producer in
                for index in 0..<perProducer {
                    loop.execute {
                        if running.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                            overlapped.store(true, ordering: .relaxed)
                        }
                        let covered = loop.coversCurrentThread
                        seen.withLock { seen in
                            if seen.next[producer] != index { seen.outOfOrder += 1 }
                            seen.next[producer] = index + 1
                            if !covered { seen.uncovered += 1 }
                            seen.done += 1
                        }
                        running.subtract(1, ordering: .sequentiallyConsistent)
                    }
                }
            }
        }
        let end = MonotonicClock.nanoseconds() + 5_000_000_000
        while seen.withLock({ $0.done }) < producers * perProducer && MonotonicClock.nanoseconds() < end {
            try await Task.sleep(for: .milliseconds(2))
        }
        let result = seen.withLock { $0 }
        #expect(result.done == producers * perProducer)
        #expect(result.outOfOrder == 0)
        #expect(result.uncovered == 0)
        let jobsOverlapped = overlapped.load(ordering: .relaxed)
        #expect(!jobsOverlapped)
        #expect(!loop.coversCurrentThread)
    }

    /// Starting and stopping servers starts no threads of ours: every server shares the process's loops, one
    /// per core (the epoll loops' threads are named `pc-http-N`; the Dispatch loops start none).
    @Test(arguments: EventLoopDriver.available)
    func serversShareTheProcessLoops(driver: EventLoopDriver) async throws {
        @Sendable func serveOnce() throws {
            let server = try TestServer(driver: driver) { _ in HTTPResponse(status: 200, body: .bytes(Array("ok".utf8)))
            }
            defer { server.server.stop() }
            #expect(server.server.eventLoop == driver)
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        try await blocking { try serveOnce() }
        let threads = loopThreads()
        if driver == .epoll { #expect(threads == EventLoopGroup.coreCount) }
        try await blocking { for _ in 0..<20 { try serveOnce() } }
        #expect(loopThreads() == threads)
    }

    /// A driver the platform lacks is refused at start, not at the first connection.
    @Test func unavailableDriverIsRefused() throws {
        for driver in EventLoopDriver.allCases where !driver.isAvailable {
            let server = HTTPServer(
                configuration: HTTPServerConfiguration(port: 0, eventLoop: driver),
                responder: ClosureResponder { _ in HTTPResponse(status: 200) }, logger: .disabled)
            #expect(throws: HTTPServerError.eventLoopUnavailable(driver)) { _ = try server.start() }
        }
        #expect(EventLoopDriver.available.first == EventLoopDriver.platformDefault)
    }
}

/// Threads of this process named like the epoll loops (`pc-http-N`), from /proc/self/task/*/comm.
private func loopThreads() -> Int {
    guard let tasks = DirectoryEntries.names(in: "/proc/self/task") else { return -1 }
    var count = 0
    for entry in tasks {
        let task = String(decoding: entry, as: UTF8.self)
        guard task.first?.isNumber == true, let file = fopen("/proc/self/task/\(task)/comm", "r") else { continue }
        var name = [CChar](repeating: 0, count: 64)
        if fgets(&name, Int32(name.count), file) != nil,
            String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).hasPrefix("pc-http-")
        {
            count += 1
        }
        fclose(file)
    }
    return count
}
