internal import CSQLite
import PortcullisCore

/// One prepared statement of a `SQLiteDatabase`, cached by that connection and confined to its queue.
///
/// Usage is bind → step… → (the connection resets it before the next use). Column accessors copy values out
/// immediately, so nothing points into SQLite memory after the next step.
final class SQLiteStatement {
    let handle: OpaquePointer
    /// Unowned: the database caches its statements, so a strong reference would be a cycle.
    private unowned let database: SQLiteDatabase
    /// Whether the connection's current job used this statement (see `SQLiteDatabase.releaseStatements`).
    var isHandedOut = false

    init(handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ index: Int32, _ value: Int64) throws(StorageError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ index: Int32, _ value: Int64?) throws(StorageError) {
        if let value { try bind(index, value) } else { try bindNull(index) }
    }

    func bind(_ index: Int32, _ value: String?) throws(StorageError) {
        guard let value else { return try bindNull(index) }
        let length = Int32(value.utf8.count)
        let code = value.withCString { pc_sqlite3_bind_text_transient(handle, index, $0, length) }
        try check(code)
    }

    /// Binds bytes as a BLOB: BLOBs compare with `memcmp`, which is UTF-8 byte order for names.
    func bind(_ index: Int32, blob: [UInt8]) throws(StorageError) {
        let code = blob.withUnsafeBytes { raw in
            // A zero-length blob must still be a BLOB (not NULL): give SQLite a non-null pointer.
            pc_sqlite3_bind_blob_transient(
                handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!,
                Int32(raw.count))
        }
        try check(code)
    }

    /// Binds a string's UTF-8 bytes as a BLOB, as `bind(_:blob:)` with `Array(text.utf8)` does, without the array.
    func bind(_ index: Int32, blobUTF8 text: String) throws(StorageError) {
        var text = text
        let code = text.withUTF8 { bytes in
            pc_sqlite3_bind_blob_transient(
                handle, index, UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!,
                Int32(bytes.count))
        }
        try check(code)
    }

    func bindNull(_ index: Int32) throws(StorageError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Advances; true when a row is available, false when done.
    func step() throws(StorageError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw database.error(code, "step")
    }

    /// Runs a statement that returns no rows.
    func run() throws(StorageError) {
        while try step() {}
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The bytes of a TEXT column (valid only inside `body`), or nil for NULL: read without a `String`.
    func withTextBytes<R>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let pointer = sqlite3_column_text(handle, column) else { return body(nil) }
        return body(UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column))))
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    private func check(_ code: Int32) throws(StorageError) {
        if code != SQLITE_OK { throw database.error(code, "bind") }
    }
}
