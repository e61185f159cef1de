public import Foundation

/// Uploads many files or buffers with one aggregate progress and one outcome — the "multiple file uploader"
/// apps otherwise hand-roll (and commonly get wrong: racing counters, completion firing twice, or success
/// reported before every upload finished).
///
/// Guarantees: progress (bytes completed / total bytes over all items) is monotonic and thread-safe; the
/// outcome is delivered exactly once; success only after every upload succeeded, with metadata in the order
/// items were added; on the first failure every other upload is cancelled and that one error is reported;
/// at most `maxConcurrentUploads` run at once.
public final class BatchUploader: @unchecked Sendable {
    public struct Item: Sendable {
        enum Source: Sendable { case data(Data), file(URL) }
        let source: Source
        let reference: StorageReference
        let metadata: StorageMetadata?
        let size: Int64
    }

    public let maxConcurrentUploads: Int
    private let lock = NSLock()
    private var items: [Item] = []
    private var started = false
    private var finished = false
    private var perItemCompleted: [Int64] = []
    private var reportedCompleted: Int64 = 0
    private var running: [Int: UploadTask] = [:]
    private var cancelled = false
    private var progressHandlers: [@Sendable (Int64, Int64) -> Void] = []
    /// Serialises handler calls: totals are computed under `lock` but delivered after it is released, so two
    /// uploads finishing together could otherwise deliver 200 then 100. Guarded by `delivery`.
    private let delivery = NSLock()
    private var lastDelivered: Int64 = 0

    public init(maxConcurrentUploads: Int = 4) {
        self.maxConcurrentUploads = max(1, maxConcurrentUploads)
    }

    public func add(data: Data, to reference: StorageReference, metadata: StorageMetadata? = nil) {
        append(Item(source: .data(data), reference: reference, metadata: metadata, size: Int64(data.count)))
    }

    public func add(file: URL, to reference: StorageReference, metadata: StorageMetadata? = nil) throws(StorageError) {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber else {
            throw StorageError(.invalidArgument, "Cannot read file \(file.path)")
        }
        append(Item(source: .file(file), reference: reference, metadata: metadata, size: size.int64Value))
    }

    private func append(_ item: Item) {
        lock.withLock {
            precondition(!started, "BatchUploader: add items before start")
            items.append(item)
        }
    }

    /// Called with (completed bytes, total bytes) whenever the aggregate grows.
    public func onProgress(_ handler: @escaping @Sendable (Int64, Int64) -> Void) {
        lock.withLock { progressHandlers.append(handler) }
    }

    public var totalBytes: Int64 { lock.withLock { items.reduce(0) { $0 + $1.size } } }
    public var completedBytes: Int64 { lock.withLock { reportedCompleted } }

    /// Cancels every running upload; `start` then fails with `cancelled` (once).
    public func cancel() {
        let tasks = lock.withLock { () -> [UploadTask] in
            cancelled = true
            return Array(running.values)
        }
        for task in tasks { task.cancel() }
    }

    /// Runs the batch; returns each item's metadata in the order added.
    public func start() async throws(StorageError) -> [StorageMetadata] {
        let batch = lock.withLock { () -> [Item]? in
            guard !started else { return nil }
            started = true
            perItemCompleted = Array(repeating: 0, count: items.count)
            return items
        }
        guard let batch else { throw StorageError(.invalidArgument, "BatchUploader.start may be called once") }
        var results = [StorageMetadata?](repeating: nil, count: batch.count)
        var firstError: StorageError?
        await withTaskGroup(of: (Int, Result<StorageMetadata, StorageError>).self) { group in
            var next = 0
            func launch() {
                guard next < batch.count else { return }
                let index = next
                next += 1
                group.addTask { [self] in (index, await upload(batch[index], index: index)) }
            }
            for _ in 0..<min(maxConcurrentUploads, batch.count) { launch() }
            while let (index, result) = await group.next() {
                switch result {
                case .success(let metadata):
                    results[index] = metadata
                    if firstError == nil && !lock.withLock({ cancelled }) { launch() }
                case .failure(let error):
                    if firstError == nil {
                        firstError = error
                        cancel()
                    }
                }
            }
        }
        let outcome: Result<[StorageMetadata], StorageError>
        if let firstError {
            outcome = .failure(firstError)
        } else if lock.withLock({ cancelled }) || results.contains(where: { $0 == nil }) {
            outcome = .failure(.cancelled())
        } else {
            outcome = .success(results.map { $0! })
        }
        lock.withLock { finished = true }
        return try outcome.get()
    }

    /// Callback form of `start()`: `completion` is called exactly once.
    public func start(completion: @escaping @Sendable (Result<[StorageMetadata], StorageError>) -> Void) {
        Task {
            do throws(StorageError) { completion(.success(try await start())) } catch { completion(.failure(error)) }
        }
    }

    private func upload(_ item: Item, index: Int) async -> Result<StorageMetadata, StorageError> {
        let task: UploadTask
        switch item.source {
        case .data(let data): task = item.reference.putData(data, metadata: item.metadata)
        case .file(let url): task = item.reference.putFile(from: url, metadata: item.metadata)
        }
        let proceed = lock.withLock { () -> Bool in
            guard !cancelled else { return false }
            running[index] = task
            return true
        }
        guard proceed else {
            task.cancel()
            return .failure(.cancelled())
        }
        task.observe(.progress) { [self] snapshot in
            record(index: index, completed: snapshot.progress.completedUnitCount)
        }
        defer { lock.withLock { running[index] = nil } }
        do {
            let metadata = try await task.result()
            record(index: index, completed: item.size)
            return .success(metadata)
        } catch {
            return .failure(error)
        }
    }

    /// Folds one item's progress into the aggregate, keeping both per-item and aggregate figures monotonic
    /// (an upload that restarts from the server's offset must not make the bar go backwards).
    private func record(index: Int, completed: Int64) {
        let grew = lock.withLock { () -> Bool in
            guard !finished, completed > perItemCompleted[index] else { return false }
            perItemCompleted[index] = completed
            let sum = perItemCompleted.reduce(0, +)
            guard sum > reportedCompleted else { return false }
            reportedCompleted = sum
            return true
        }
        guard grew else { return }
        delivery.withLock {
            // Read the newest total inside the delivery step: a caller that lost the race delivers the larger
            // figure or nothing, never a smaller one after a larger.
            let (done, total, handlers) = lock.withLock {
                (reportedCompleted, items.reduce(Int64(0)) { $0 + $1.size }, progressHandlers)
            }
            guard done > lastDelivered else { return }
            lastDelivered = done
            for handler in handlers { handler(done, total) }
        }
    }

}
