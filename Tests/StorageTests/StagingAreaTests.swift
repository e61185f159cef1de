import Foundation
import PortcullisCore
import Testing

@testable import Storage

/// Resumable sessions in the index: finished ones pile up until they expire, and must stay off the paths every
/// chunk and every sweep takes.
@Suite struct StagingAreaTests {
    /// SQLite's plan for `sql`: the detail column of `EXPLAIN QUERY PLAN`, one line per step.
    static func plan(_ db: SQLiteDatabase, _ sql: String) throws -> String {
        defer { db.releaseStatements() }
        let statement = try db.statement("EXPLAIN QUERY PLAN " + sql)
        var details: [String] = []
        while try statement.step() { details.append(statement.text(3) ?? "") }
        return details.joined(separator: "; ")
    }

    /// The per-chunk sum of active sizes and the list of active sessions read only the active rows' partial
    /// index; the sweep finds expired rows through `last_active`.
    @Test func queriesOverManySessionsReadIndexes() throws {
        let directory = TemporaryDirectory()
        let backend = try EmbeddedBackendTests.openBackend(directory)
        let db = try SQLiteDatabase(path: backend.store.layout.index, busyTimeoutMilliseconds: 5000)
        let sum = try Self.plan(db, StagingArea.activeBytesSQL)
        #expect(sum.contains("INDEX staging_active"), "\(sum)")
        let ids = try Self.plan(db, StagingArea.activeIDsSQL)
        #expect(ids.contains("INDEX staging_active"), "\(ids)")
        let sweep = try Self.plan(db, StagingArea.expireSQL)
        #expect(sweep.contains("INDEX staging_last_active"), "\(sweep)")
    }

    /// With finished sessions around, the sums and the sweep still count what they should.
    @Test func finishedSessionsDoNotCount() throws {
        let directory = TemporaryDirectory()
        let backend = try EmbeddedBackendTests.openBackend(directory)
        let db = try SQLiteDatabase(path: backend.store.layout.index, busyTimeoutMilliseconds: 5000)
        let object = try EmbeddedBackendTests.path("staged")
        let old = Timestamp(nanosecondsSinceEpoch: 1_000)
        let recent = Timestamp(nanosecondsSinceEpoch: 5_000)
        for index in 0..<50 {
            let id = "session-\(index)"
            try StagingArea.insert(
                db, id: id, object: object, attributes: ObjectAttributes(), declaredSize: nil,
                now: index < 10 ? old : recent)
            #expect(try StagingArea.recordAppend(db, id: id, oldSize: 0, newSize: 100, now: index < 10 ? old : recent))
            if index % 2 == 0 {
                #expect(try StagingArea.close(db, id: id, state: .final, generation: 1, now: index < 10 ? old : recent))
            }
        }
        #expect(try StagingArea.activeBytes(db) == 25 * 100)
        #expect(try StagingArea.activeIDs(db).count == 25)
        try StagingArea.expire(db, idleBefore: 2_000)
        #expect(try StagingArea.activeIDs(db).count == 20)
        #expect(try StagingArea.activeBytes(db) == 20 * 100)
        #expect(try StagingArea.fetch(db, id: "session-0") == nil)
        #expect(try StagingArea.fetch(db, id: "session-10")?.state == .final)
    }
}
