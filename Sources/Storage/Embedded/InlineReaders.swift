import PortcullisCore
import Synchronization

/// SQLite reader connections used in place, on the calling thread, for point lookups made while an HTTP event
/// loop runs a request synchronously and grants it `InPlaceLookup.permit`.
///
/// Why: a cached metadata GET is a ~10 µs index lookup, but the round trip through a reader lane (enqueue,
/// wake the lane's thread, resume the task on the cooperative pool, hand the response back to the connection's
/// queue) cost three thread switches and most of the request's CPU. Done in place, the whole request finishes
/// on the loop without a hop.
///
/// The trade (DESIGN §3): while the lookup runs, the loop's other connections wait. It is bounded here:
/// - only point lookups by primary key (one B-tree descent, normally from the page cache) come here — never a
///   list scan or a write;
/// - the connections have a busy timeout of 0: a lookup that would wait for a lock (WAL recovery, another
///   process's checkpoint) fails at once and is retried on a reader lane, which may wait;
/// - a connection is taken with `tryLock`: when every one is in use, the read takes a lane instead of waiting.
///
/// Each connection is used by one thread at a time (the mutex), which is what `SQLITE_OPEN_NOMUTEX` requires.
final class InlineReaders: Sendable {
    private final class Slot: Sendable {
        let connection: Mutex<SQLiteDatabase>
        init(_ connection: SQLiteDatabase) { self.connection = Mutex(connection) }
    }

    private let slots: [Slot]
    private let next = Atomic<Int>(0)

    init(path: String, count: Int) throws(StorageError) {
        var slots: [Slot] = []
        for _ in 0..<max(0, count) {
            let connection = try SQLiteDatabase(path: path, busyTimeoutMilliseconds: 0)
            try connection.execute("PRAGMA query_only=1;")
            slots.append(Slot(connection))
        }
        self.slots = slots
    }

    /// Whether an in-place read may be attempted here at all: connections exist and the current task holds
    /// an event loop's permit that covers this thread (`InPlaceLookup`).
    var isUsable: Bool { !slots.isEmpty && InPlaceLookup.isPermitted }

    /// How many lookups have been tried in place (tests check that a disabled configuration tries none).
    var attempts: Int { next.load(ordering: .relaxed) }

    /// Runs `body` on a free connection, in place. nil when none is free or the database is busy (the caller
    /// then uses a reader lane); otherwise the body's result or error.
    func run<T: Sendable>(_ body: (SQLiteDatabase) throws(StorageError) -> T) -> Result<T, StorageError>? {
        let start = next.add(1, ordering: .relaxed).oldValue
        for offset in 0..<slots.count {
            let slot = slots[(start &+ offset) % slots.count]
            let outcome = slot.connection.withLockIfAvailable { connection -> Result<T, StorageError> in
                defer { connection.releaseStatements() }
                do throws(StorageError) {
                    return .success(try body(connection))
                } catch {
                    return .failure(error)
                }
            }
            guard let outcome else { continue }
            if case .failure(.unavailable) = outcome { return nil }
            return outcome
        }
        return nil
    }
}
