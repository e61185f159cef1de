import PortcullisCore

/// Operator access to an embedded directory's event outbox (`portcullis events list|redeliver`): its own
/// SQLite connection, usable while servers have the directory open (WAL; writes wait for their turn).
/// It opens no buckets and removes no files.
public final class EventOutboxAdmin: Sendable {
    private let lane: DatabaseLane

    /// Opens the outbox of `directory`; a directory without an index is an error (nothing to show).
    public init(directory: String) throws(StorageError) {
        let root = FileSystem.canonicalPath(directory) ?? directory
        let layout = DirectoryLayout(root: root)
        guard FileSystem.modificationTime(layout.index) != nil else {
            throw .invalidArgument("\(directory) is not an embedded storage directory (no index.sqlite)")
        }
        let connection = try SQLiteDatabase(path: layout.index, busyTimeoutMilliseconds: 5000)
        try connection.execute(EventOutboxSQL.schema)
        lane = DatabaseLane(label: "portcullis.events.admin", connection: connection)
    }

    /// Events waiting for delivery (and their deliveries), or only dead-lettered deliveries; commit order.
    public func list(deadOnly: Bool, limit: Int = 10_000) throws(StorageError) -> [OutboxEntry] {
        try lane.runSync { (db) throws(StorageError) -> [OutboxEntry] in
            try db.transaction(immediate: false) { () throws(StorageError) -> [OutboxEntry] in
                try EventOutboxSQL.list(db, deadOnly: deadOnly, limit: limit)
            }
        }
    }

    /// Revives the dead-lettered deliveries of the events `ids` names; returns how many each id revived.
    public func redeliver(_ ids: [String]) throws(StorageError) -> [Int] {
        try lane.runSync { (db) throws(StorageError) -> [Int] in
            try db.transaction(immediate: true) { () throws(StorageError) -> [Int] in
                var counts: [Int] = []
                for id in ids { counts.append(try EventOutboxSQL.redeliver(db, id: id, now: .now())) }
                return counts
            }
        }
    }
}
