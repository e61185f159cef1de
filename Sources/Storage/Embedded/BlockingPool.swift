import Dispatch
import PortcullisCore
import Synchronization

/// A fixed number of serial DispatchQueues ("lanes") where the embedded backend runs blocking work: file
/// opens, writes, `fsync`, renames, unlinks. Never Swift's cooperative pool, whose threads are as many as the
/// cores: one blocked call there stalls half the server.
///
/// Bounded: at most `laneCount` threads are ever busy with this pool's work; further jobs wait in their
/// lane's queue. Async callers are bridged with a checked continuation that is resumed exactly once.
final class BlockingPool: Sendable {
    private let lanes: [DispatchQueue]
    private let nextLane = Atomic<Int>(0)

    init(label: String, laneCount: Int) {
        lanes = (0..<max(1, laneCount)).map { DispatchQueue(label: "\(label).\($0)", qos: .userInitiated) }
    }

    /// The next lane (round robin), for a caller that must keep several jobs in order on one queue
    /// (`UploadPipeline`).
    func lane() -> DispatchQueue {
        lanes[nextLane.add(1, ordering: .relaxed).oldValue % lanes.count]
    }

    /// Runs `body` on the next lane (round robin) and returns its result to the awaiting task.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(StorageError) -> T) async throws(StorageError) -> T {
        try await Self.run(on: lane(), body)
    }

    /// Runs `body` on `queue` and suspends the caller until it finished.
    static func run<T: Sendable>(
        on queue: DispatchQueue,
        _ body: @escaping @Sendable () throws(StorageError) -> T
    ) async throws(StorageError) -> T {
        let result: Result<T, StorageError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(StorageError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}

extension BlockingPool {
    /// Runs cleanup work that cannot fail (unlinks, closes) and waits for it.
    func runQuietly(_ body: @escaping @Sendable () -> Void) async {
        _ = try? await run { () throws(StorageError) in body() }
    }
}
