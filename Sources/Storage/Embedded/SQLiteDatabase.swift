internal import CSQLite
import PortcullisCore

/// One SQLite connection and its prepared-statement cache.
///
/// Confinement: a connection is used by exactly one serial queue (`DatabaseLane`), so it is opened with
/// `SQLITE_OPEN_NOMUTEX` and is `@unchecked Sendable` only so the lane can own it. The statement cache is
/// keyed by SQL text; the backend uses a fixed set of statements, and the cache is capped anyway.
final class SQLiteDatabase: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    /// Statements of `StatementText`s, found by the text object's identity (see there).
    private var statementsByText: [ObjectIdentifier: SQLiteStatement] = [:]
    /// Statements handed out since the last `releaseStatements()`: a stepped statement that is not reset
    /// keeps its read snapshot open, so every unit of work ends by resetting them.
    private var handedOut: [SQLiteStatement] = []
    private static let statementCacheLimit = 64
    let path: String

    init(path: String, busyTimeoutMilliseconds: Int32) throws(StorageError) {
        _ = Self.processConfiguration
        self.path = path
        var pointer: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &pointer, flags, nil)
        guard let pointer else { throw .internalError("sqlite3_open_v2 \(path): out of memory") }
        handle = pointer
        guard code == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(pointer))
            sqlite3_close_v2(pointer)
            throw .internalError("sqlite open \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(handle, 1)
    }

    /// Process-wide settings that SQLite accepts only before its first use, applied once before the first open.
    /// Allocation statistics off: with them on, every allocation inside SQLite takes one process-wide mutex,
    /// and the reader connections of the event loops queued on it (futex waits on about one lookup in four
    /// at two loops). A process that used SQLite before this (none in the gateway) keeps the statistics on.
    private static let processConfiguration: Void = {
        _ = pc_sqlite3_disable_memory_statistics()
    }()

    deinit {
        handedOut.removeAll()
        statements.removeAll()
        statementsByText.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The start of this connection's mapping of the WAL index (`pc_sqlite3_wal_index`), valid until the
    /// connection closes; nil when the database is not in WAL mode. Asking the journal mode reads the
    /// database, which opens the WAL index; a database in another mode gets no `-shm` file from this.
    func walIndex() throws(StorageError) -> UnsafeRawPointer? {
        defer { releaseStatements() }
        let mode = try statement("PRAGMA journal_mode;")
        guard try mode.step(), let name = mode.text(0), name.bytesEqual("wal") else { return nil }
        return pc_sqlite3_wal_index(handle)
    }

    /// Runs one or more statements without results (schema, pragmas, transaction control).
    func execute(_ sql: String) throws(StorageError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error \(code)"
            sqlite3_free(message)
            throw classify(code, "\(text) in: \(sql.prefix(80))")
        }
    }

    /// The cached, reset statement for `sql`.
    func statement(_ sql: String) throws(StorageError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            markHandedOut(cached)
            return cached
        }
        var pointer: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard code == SQLITE_OK, let pointer else { throw error(code, "prepare \(sql.prefix(80))") }
        let statement = SQLiteStatement(handle: pointer, database: self)
        if statements.count >= Self.statementCacheLimit { statements.removeAll() }
        statements[sql] = statement
        markHandedOut(statement)
        return statement
    }

    /// The cached, reset statement for `text`: as `statement(_:)`, without hashing and comparing the SQL.
    func statement(_ text: StatementText) throws(StorageError) -> SQLiteStatement {
        if let cached = statementsByText[ObjectIdentifier(text)] {
            cached.reset()
            markHandedOut(cached)
            return cached
        }
        let statement = try statement(text.sql)
        statementsByText[ObjectIdentifier(text)] = statement
        return statement
    }

    private func markHandedOut(_ statement: SQLiteStatement) {
        guard !statement.isHandedOut else { return }
        statement.isHandedOut = true
        handedOut.append(statement)
    }

    /// Resets every statement used since the last call, ending their implicit read transactions. Called by
    /// the owning lane after each job and before COMMIT.
    func releaseStatements() {
        for statement in handedOut {
            statement.reset()
            statement.isHandedOut = false
        }
        handedOut.removeAll(keepingCapacity: true)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// `immediate` takes the write lock up front (every write transaction), so a busy database waits in
    /// `busy_timeout` at BEGIN instead of failing at the first write.
    func transaction<T>(immediate: Bool, _ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            releaseStatements()
            try execute("COMMIT")
            return result
        } catch {
            releaseStatements()
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    func error(_ code: Int32, _ what: String) -> StorageError {
        classify(code, "\(what): \(String(cString: sqlite3_errmsg(handle)))")
    }

    /// A busy or locked database is transient (another process holds the write lock past `busy_timeout`):
    /// `.unavailable` with a retry hint. Everything else is an internal error.
    private func classify(_ code: Int32, _ message: String) -> StorageError {
        let primary = code & 0xFF
        if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
            return .unavailable(reason: "database busy: \(message)", retryAfter: 1)
        }
        if primary == SQLITE_FULL { return .unavailable(reason: "disk full: \(message)", retryAfter: nil) }
        return .internalError("sqlite \(path): \(message)")
    }
}

/// The SQL of a statement on a hot path, as one long-lived object: `SQLiteDatabase.statement(_:)` finds its
/// prepared statement by the object's identity, where a lookup by text hashes and compares the whole SQL (a
/// point lookup's ~250 bytes, 0.3 % of a metadata GET). Keep instances in `static let`s: the cache holds one
/// statement per instance and connection, for the connection's life.
final class StatementText: Sendable {
    let sql: String
    init(_ sql: String) { self.sql = sql }
}
