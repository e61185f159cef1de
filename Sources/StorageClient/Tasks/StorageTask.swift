import Foundation

/// What an observer is told about.
public enum StorageTaskStatus: Sendable, Hashable, CaseIterable {
    case resume, pause, progress, success, failure
}

/// Units of work done: bytes transferred of bytes expected (`totalUnitCount` is -1 while unknown).
public struct StorageProgress: Sendable, Equatable {
    public var completedUnitCount: Int64
    public var totalUnitCount: Int64
    public var fractionCompleted: Double {
        totalUnitCount > 0 ? Double(completedUnitCount) / Double(totalUnitCount) : 0
    }
}

/// The state of a task at the moment an observer is called.
public struct StorageTaskSnapshot: Sendable {
    public let status: StorageTaskStatus
    public let progress: StorageProgress
    public let error: StorageError?
    /// Set on upload success.
    public let metadata: StorageMetadata?
    public let reference: StorageReference
    public let task: StorageObservableTask
}

/// The shared control and observation machinery of upload and download tasks (the Firebase
/// `StorageObservableTask` API): `pause`, `resume`, `cancel`, and observers with removable handles.
///
/// Work runs in a Swift task; pausing or cancelling cancels it (which aborts the HTTP exchange in flight),
/// and resuming starts a fresh one that continues from the recorded progress. Observers are called outside
/// the lock, in order, and all are removed after success or failure. Thread-safe.
public class StorageObservableTask: @unchecked Sendable {
    enum State: Equatable { case idle, running, paused, succeeded, failed }

    public let reference: StorageReference
    private let lock = NSLock()
    private var state = State.idle
    private var work: Task<Void, Never>?
    private var observers:
        [(handle: String, status: StorageTaskStatus, handler: @Sendable (StorageTaskSnapshot) -> Void)] = []
    private var waiters: [CheckedContinuation<Result<StorageMetadata?, StorageError>, Never>] = []
    private var outcome: Result<StorageMetadata?, StorageError>?
    private var progressValue = StorageProgress(completedUnitCount: 0, totalUnitCount: -1)
    private var nextHandle = 0

    init(reference: StorageReference) { self.reference = reference }

    /// Subclasses: do (the rest of) the work; return upload metadata (or nil) on success. Throwing
    /// `CancellationError` after `pause()`/`cancel()` is expected.
    func perform() async throws(StorageError) -> StorageMetadata? { nil }

    public var progress: StorageProgress { lock.withLock { progressValue } }

    /// Registers `handler` for `status`; returns the handle for `removeObserver(withHandle:)`.
    @discardableResult
    public func observe(_ status: StorageTaskStatus, handler: @escaping @Sendable (StorageTaskSnapshot) -> Void)
        -> String
    {
        lock.withLock {
            nextHandle += 1
            let handle = "observer-\(nextHandle)"
            observers.append((handle, status, handler))
            return handle
        }
    }

    public func removeObserver(withHandle handle: String) {
        lock.withLock { observers.removeAll { $0.handle == handle } }
    }
    public func removeAllObservers(for status: StorageTaskStatus) {
        lock.withLock { observers.removeAll { $0.status == status } }
    }
    public func removeAllObservers() { lock.withLock { observers.removeAll() } }

    /// Stops transferring; `resume()` continues where it stopped. No effect unless running.
    public func pause() {
        let task: Task<Void, Never>? = lock.withLock {
            guard state == .running else { return nil }
            state = .paused
            defer { work = nil }
            return work
        }
        guard let task else { return }
        task.cancel()
        fire(.pause)
    }

    /// Continues a paused task. No effect unless paused.
    public func resume() {
        let resumed = lock.withLock { () -> Bool in
            guard state == .paused else { return false }
            state = .running
            return true
        }
        guard resumed else { return }
        fire(.resume)
        launch()
    }

    /// Stops for good: the task fails with `cancelled` (once).
    public func cancel() {
        let task: Task<Void, Never>?? = lock.withLock {
            guard state == .running || state == .paused || state == .idle else { return .none }
            defer { work = nil }
            return .some(work)
        }
        guard case .some(let running) = task else { return }
        running?.cancel()
        didCancel()
        finish(.failure(.cancelled()))
    }

    /// Waits for the end: the uploaded metadata (nil for downloads) or the error.
    public func waitForCompletion() async throws(StorageError) -> StorageMetadata? {
        let result = await withCheckedContinuation { continuation in
            lock.withLock {
                if let outcome { continuation.resume(returning: outcome) } else { waiters.append(continuation) }
            }
        }
        return try result.get()
    }

    /// Hook for subclasses to tell the server (e.g. the resumable `cancel` command).
    func didCancel() {}

    func enqueue() {
        let start = lock.withLock { () -> Bool in
            guard state == .idle else { return false }
            state = .running
            return true
        }
        guard start else { return }
        // Let the caller attach observers before the first event fires.
        Task { [self] in
            await Task.yield()
            fire(.resume)
            launch()
        }
    }

    /// Records progress and tells `.progress` observers — only while running: an exchange that was in
    /// flight when `pause()` or `cancel()` returned may still complete, but a paused task reports nothing.
    func updateProgress(completed: Int64, total: Int64) {
        let running = lock.withLock { () -> Bool in
            guard state == .running else { return false }
            progressValue = StorageProgress(completedUnitCount: completed, totalUnitCount: total)
            return true
        }
        if running { fire(.progress) }
    }

    private func launch() {
        let task = Task { [self] in
            do throws(StorageError) {
                let metadata = try await perform()
                finishIfCurrent(.success(metadata))
            } catch {
                if Task.isCancelled || error.code == .cancelled && isPausedOrFinished { return }
                finishIfCurrent(.failure(error))
            }
        }
        lock.withLock {
            if state == .running { work = task } else { task.cancel() }
        }
    }

    private var isPausedOrFinished: Bool { lock.withLock { state != .running } }

    private func finishIfCurrent(_ result: Result<StorageMetadata?, StorageError>) {
        guard lock.withLock({ state == .running }) else { return }
        finish(result)
    }

    private func finish(_ result: Result<StorageMetadata?, StorageError>) {
        let (finished, waiting) = lock.withLock {
            () -> (Bool, [CheckedContinuation<Result<StorageMetadata?, StorageError>, Never>]) in
            guard outcome == nil else { return (false, []) }
            outcome = result
            if case .success = result { state = .succeeded } else { state = .failed }
            defer { waiters = [] }
            return (true, waiters)
        }
        guard finished else { return }
        switch result {
        case .success: fire(.success)
        case .failure: fire(.failure)
        }
        removeAllObservers()
        for waiter in waiting { waiter.resume(returning: result) }
    }

    private func fire(_ status: StorageTaskStatus) {
        let (handlers, snapshot) = lock.withLock {
            () -> ([@Sendable (StorageTaskSnapshot) -> Void], StorageTaskSnapshot) in
            let error: StorageError? = if case .failure(let e) = outcome { e } else { nil }
            let metadata: StorageMetadata? = if case .success(let m) = outcome { m } else { nil }
            let snapshot = StorageTaskSnapshot(
                status: status, progress: progressValue, error: error, metadata: metadata,
                reference: reference, task: self)
            return (observers.filter { $0.status == status }.map(\.handler), snapshot)
        }
        for handler in handlers { handler(snapshot) }
    }
}
