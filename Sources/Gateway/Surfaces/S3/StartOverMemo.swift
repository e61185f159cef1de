import Synchronization

/// A memo shared by every loop that forgets everything at once when full. For the S3 surface's per-request
/// caches (signing keys, verified presigned requests): a miss costs one recomputation, so an eviction order
/// would cost more bookkeeping per request than it saves.
final class StartOverMemo<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let entries = Mutex<[Key: Value]>([:])
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func value(for key: Key) -> Value? {
        entries.withLock { $0[key] }
    }

    func remember(_ value: Value, for key: Key) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
    }
}
