import Dispatch
import Synchronization
import Testing
import PortcullisCore
@testable import HTTPServer
#if canImport(Glibc)
import Glibc
#endif

/// The epoll loops: jobs handed over from other threads, and the loops' process-wide lifetime.
@Suite(.serialized) struct EventLoopTests {
    /// Jobs from many threads all run, on the loop's one thread, each producer's jobs in the order given.
    @Test func jobsFromOtherThreadsRunInOrderOnTheLoop() async throws {
        let loop = EventLoop.shared[0]
        let producers = 8, perProducer = 2000
        struct Seen { var next = [Int](repeating: 0, count: 8); var threads = Set<UInt>(); var outOfOrder = 0; var done = 0 }
        let seen = Mutex(Seen())
        try await blocking {
            DispatchQueue.concurrentPerform(iterations: producers) { producer in
                for index in 0..<perProducer {
                    loop.execute {
                        seen.withLock { seen in
                            if seen.next[producer] != index { seen.outOfOrder += 1 }
                            seen.next[producer] = index + 1
                            seen.threads.insert(UInt(pthread_self()))
                            seen.done += 1
                        }
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
        #expect(result.threads.count == 1)
    }

    /// Starting and stopping servers starts no loop threads: every server shares the process's loops, one per
    /// core. Counted by thread name, so threads other tests start meanwhile do not matter.
    @Test func serversShareTheProcessLoops() async throws {
        @Sendable func serveOnce() throws {
            let server = try TestServer { _ in HTTPResponse(status: 200, body: .bytes(Array("ok".utf8))) }
            defer { server.server.stop() }
            let client = try server.client()
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        try await blocking { try serveOnce() }
        #expect(loopThreads() == EventLoop.shared.count)
        try await blocking { for _ in 0..<20 { try serveOnce() } }
        #expect(loopThreads() == EventLoop.shared.count)
    }
}

/// Threads of this process named like the event loops (`pc-http-N`), from /proc/self/task/*/comm.
private func loopThreads() -> Int {
    guard let directory = opendir("/proc/self/task") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        let task = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard task.first?.isNumber == true, let file = fopen("/proc/self/task/\(task)/comm", "r") else { continue }
        var name = [CChar](repeating: 0, count: 64)
        if fgets(&name, Int32(name.count), file) != nil,
           String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).hasPrefix("pc-http-") {
            count += 1
        }
        fclose(file)
    }
    return count
}
