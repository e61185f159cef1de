import Dispatch
import PortcullisCore

/// A SQLite connection confined to its own serial queue: every use of the connection happens on `queue`.
///
/// The embedded store has one writer lane (all write transactions serialise there, as SQLite requires) and a
/// few reader lanes (WAL lets them read concurrently with the writer).
final class DatabaseLane: Sendable {
    private let queue: DispatchQueue
    private let connection: SQLiteDatabase

    init(label: String, connection: SQLiteDatabase) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
        self.connection = connection
    }

    /// Runs `body` with the connection on the lane's queue, suspending the caller meanwhile.
    func run<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws(StorageError) -> T)
        async throws(StorageError) -> T
    {
        let connection = self.connection
        return try await BlockingPool.run(on: queue) { () throws(StorageError) -> T in
            defer { connection.releaseStatements() }
            return try body(connection)
        }
    }

    /// Blocking variant for start-up and the maintenance timer (never called from the cooperative pool).
    func runSync<T>(_ body: (SQLiteDatabase) throws(StorageError) -> T) throws(StorageError) -> T {
        EventLoopThreads.assertMayBlock("a synchronous database transaction")
        let result: Result<T, StorageError> = queue.sync {
            defer { connection.releaseStatements() }
            do throws(StorageError) { return .success(try body(connection)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
