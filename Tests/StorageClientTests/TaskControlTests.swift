import Foundation
import Testing

@testable import StorageClient

/// Pause, resume, cancel and observers of upload and download tasks against a live server, 64 MiB each.
@Suite(.serialized) struct TaskControlTests {
    let server = TestServer.shared
    var storage: Storage {
        var settings = StorageSettings()
        settings.uploadChunkSize = 4 << 20
        settings.initialRetryDelay = 0.05
        return Storage(bucket: TestServer.bucket, host: "127.0.0.1:\(server.port)", settings: settings)
    }

    @Test func uploadPausesAndResumesByteExact() async throws {
        let data = patternedData(count: 64 << 20, seed: 7)
        let ref = storage.reference(withPath: "ok/tasks/upload-\(UUID().uuidString).bin")
        let log = EventLog()
        let task = ref.putData(data)
        task.observe(.pause) { _ in log.add("pause") }
        task.observe(.resume) { _ in log.add("resume") }
        task.observe(.success) { _ in log.add("success") }
        #expect(await eventually(timeout: 60) { task.progress.completedUnitCount >= 8 << 20 })
        task.pause()
        let pausedAt = task.progress.completedUnitCount
        #expect(pausedAt < Int64(data.count))
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(task.progress.completedUnitCount == pausedAt)
        task.resume()
        let metadata = try await task.result()
        #expect(metadata.size == Int64(data.count))
        #expect(try await ref.getData(maxSize: Int64(data.count)) == data)
        #expect(log.count("pause") == 1)
        #expect(log.count("success") == 1)
        #expect(log.count("resume") >= 1)
    }

    @Test func downloadPausesAndResumesByteExact() async throws {
        let data = patternedData(count: 64 << 20, seed: 11)
        let ref = storage.reference(withPath: "ok/tasks/download-\(UUID().uuidString).bin")
        _ = try await ref.putData(data).result()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: file) }
        let task = ref.write(toFile: file)
        #expect(await eventually(timeout: 60) { task.progress.completedUnitCount >= 4 << 20 })
        task.pause()
        task.resume()
        _ = try await task.waitForCompletion()
        #expect(try Data(contentsOf: file) == data)
        #expect(task.progress.completedUnitCount == Int64(data.count))
    }

    @Test func resumedDownloadRestartsWhenTheObjectChanged() async throws {
        let name = "ok/tasks/changing-\(UUID().uuidString).bin"
        let ref = storage.reference(withPath: name)
        _ = try await ref.putData(patternedData(count: 64 << 20, seed: 1)).result()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: file) }
        let task = ref.write(toFile: file)
        #expect(await eventually(timeout: 60) { task.progress.completedUnitCount >= 4 << 20 })
        task.pause()
        let replacement = patternedData(count: 5 << 20, seed: 2)
        try await server.overwrite(name, with: replacement)
        task.resume()
        _ = try await task.waitForCompletion()
        #expect(try Data(contentsOf: file) == replacement)
    }

    @Test func cancelFailsOnceAndRemovesObservers() async throws {
        let ref = storage.reference(withPath: "ok/tasks/cancel-\(UUID().uuidString).bin")
        let log = EventLog()
        let task = ref.putData(patternedData(count: 32 << 20, seed: 3))
        let handle = task.observe(.progress) { _ in log.add("progress-removed") }
        task.removeObserver(withHandle: handle)
        task.observe(.failure) { snapshot in log.add("failure:\(snapshot.error?.code == .cancelled)") }
        task.observe(.success) { _ in log.add("success") }
        #expect(await eventually(timeout: 60) { task.progress.completedUnitCount > 0 })
        task.cancel()
        task.cancel()
        await #expect(throws: StorageError.self) { try await task.result() }
        #expect(log.all == ["failure:true"])
        await #expect(throws: StorageError.self) { try await ref.getMetadata() }
    }

    @Test func observersCanBeRemovedByStatus() async throws {
        let ref = storage.reference(withPath: "ok/tasks/observers-\(UUID().uuidString).bin")
        let log = EventLog()
        let task = ref.putData(Data("x".utf8))
        task.observe(.progress) { _ in log.add("progress") }
        task.observe(.success) { _ in log.add("success") }
        task.removeAllObservers(for: .progress)
        _ = try await task.result()
        #expect(log.all == ["success"])
    }
}
