import Foundation
import Testing

@testable import StorageClient

/// The batch uploader's races: aggregate progress, exactly-once completion, fail-fast cancellation.
@Suite(.serialized) struct BatchUploaderTests {
    let server = TestServer.shared
    var storage: Storage { Storage(bucket: TestServer.bucket, host: "127.0.0.1:\(server.port)") }

    @Test func uploadsAHundredFilesWithMonotonicProgress() async throws {
        let folder = storage.reference(withPath: "ok/batch-\(UUID().uuidString.prefix(8))")
        let uploader = BatchUploader(maxConcurrentUploads: 8)
        var total: Int64 = 0
        for i in 0..<100 {
            let size = 1000 + i * 3001
            total += Int64(size)
            uploader.add(data: patternedData(count: size, seed: UInt64(i + 1)), to: folder.child("f\(i)"))
        }
        let seen = ProgressRecorder()
        uploader.onProgress { done, all in seen.record(done, all) }
        let results = try await uploader.start()
        #expect(results.count == 100)
        #expect(results.map(\.path) == (0..<100).map { folder.child("f\($0)").fullPath })
        #expect(seen.isMonotonic)
        #expect(seen.last == total)
        #expect(uploader.completedBytes == total)
        let listed = try await folder.listAll()
        #expect(listed.items.count == 100)
    }

    @Test func firstFailureCancelsTheRestAndIsReportedOnce() async throws {
        let folder = storage.reference(withPath: "ok/batch-fail-\(UUID().uuidString.prefix(8))")
        let uploader = BatchUploader(maxConcurrentUploads: 4)
        for i in 0..<100 {
            // Item 10 goes where the rules deny writes.
            let ref = i == 10 ? storage.reference(withPath: "denied/f\(i)") : folder.child("f\(i)")
            uploader.add(data: patternedData(count: 200_000, seed: UInt64(i + 1)), to: ref)
        }
        let completions = EventLog()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            uploader.start { result in
                switch result {
                case .success: completions.add("success")
                case .failure(let error): completions.add("failure:\(error.code)")
                }
                done.resume()
            }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(completions.all == ["failure:unauthorized"])
        let listed = try await folder.listAll()
        #expect(listed.items.count < 99)
    }

    @Test func cancellingMidwayFailsOnceWithCancelled() async throws {
        let folder = storage.reference(withPath: "ok/batch-cancel-\(UUID().uuidString.prefix(8))")
        let uploader = BatchUploader(maxConcurrentUploads: 2)
        for i in 0..<20 {
            uploader.add(data: patternedData(count: 2 << 20, seed: UInt64(i + 1)), to: folder.child("f\(i)"))
        }
        let runner = Task { try await uploader.start() }
        #expect(await eventually { uploader.completedBytes > 0 })
        uploader.cancel()
        do {
            _ = try await runner.value
            Issue.record("expected cancellation")
        } catch let error as StorageError {
            #expect(error.code == .cancelled)
        }
    }
}

final class ProgressRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int64] = []
    func record(_ done: Int64, _ total: Int64) { lock.withLock { values.append(done) } }
    var isMonotonic: Bool { lock.withLock { zip(values, values.dropFirst()).allSatisfy { $0 < $1 } } }
    var last: Int64? { lock.withLock { values.last } }
}
