import PortcullisCore
import Storage
import Synchronization
import Testing

/// Contract checks for change recording (docs/events.md): a `ChangeOutbox` records exactly the changes it
/// commits, rendered from the committed metadata, in the commit itself; a failed call records nothing. A
/// backend without an outbox ignores `WriteOptions.changes` (never renders).
extension BackendContract {
    func changeRecording() async throws {
        let rendered = RenderedChanges()
        let recorder = ChangeRecorder { change in rendered.render(change) }
        guard let outbox = backend as? any ChangeOutbox else {
            let written = try await put("plain", [1], options: WriteOptions(changes: recorder))
            #expect(written.size == 1)
            #expect(rendered.all.isEmpty, "a backend without an outbox must not render change events")
            return
        }
        let ledger = outbox.eventLedger
        func recorded() async throws -> [String] {
            let now = Timestamp.now()
            var seen: [String] = []
            while true {
                let claims = try await ledger.claim(
                    webhooks: ["contract"], now: now, limit: 100,
                    leaseUntil: now.adding(.seconds(60)))
                if claims.isEmpty { return seen }
                for claim in claims {
                    seen.append(String(decoding: claim.event.body, as: UTF8.self))
                    try await ledger.acknowledge(claim)
                }
            }
        }

        let first = try await put("doc", [1, 2], options: WriteOptions(changes: recorder))
        let second = try await put("doc", [3], options: WriteOptions(changes: recorder))
        let patched = try await outbox.updateMetadata(
            path("doc"),
            patch: {
                var p = MetadataPatch(); p.contentType = .set("a/b"); return p
            }(),
            preconditions: .none, recording: recorder)
        try await outbox.delete(path("doc"), preconditions: .none, recording: recorder)
        // Bodies name kind, generation and metageneration: what was committed, in commit order; an overwrite
        // is the replaced generation's deletion, then the new generation.
        #expect(
            try await recorded() == [
                "finalized \(first.generation)/1", "deleted \(first.generation)/1", "finalized \(second.generation)/1",
                "metadataUpdated \(second.generation)/2", "deleted \(second.generation)/2",
            ])
        #expect(patched.contentType == "a/b")
        #expect(rendered.all.map(\.object) == [first, first, second, patched, patched])
        #expect(rendered.all.last?.kind == .deleted)

        // A resumable upload's finalize records like a write.
        if let staging {
            let handle = try await staging.startUpload(path("big"), attributes: ObjectAttributes(), declaredSize: 3)
            _ = try await staging.appendChunk(
                handle, object: path("big"), offset: 0, body: BufferByteStream([1, 2, 3]))
            let finalized = try await staging.finalizeUpload(
                handle, object: path("big"), attributes: ObjectAttributes(),
                options: WriteOptions(changes: recorder))
            #expect(try await recorded() == ["finalized \(finalized.generation)/1"])
        }

        // Calls that fail commit nothing and record nothing.
        try await put("kept", [9])
        rendered.reset()
        await #expect(throws: StorageError.self) {
            try await put(
                "kept", [1],
                options: WriteOptions(
                    preconditions: Preconditions(ifGenerationMatch: 0),
                    changes: recorder))
        }
        await #expect(throws: StorageError.self) {
            try await put("kept", [1], options: WriteOptions(beforeCommit: { _ in throw Refusal() }, changes: recorder))
        }
        await #expect(throws: StorageError.self) {
            try await put(
                "kept", [1], options: WriteOptions(expectedMD5: "AAAAAAAAAAAAAAAAAAAAAA==", changes: recorder))
        }
        await #expect(throws: StorageError.self) {
            _ = try await outbox.updateMetadata(
                path("kept"), patch: MetadataPatch(),
                preconditions: Preconditions(ifMetagenerationMatch: 7), recording: recorder)
        }
        await #expect(throws: StorageError.self) {
            try await outbox.delete(
                path("kept"), preconditions: Preconditions(ifGenerationMatch: 1), recording: recorder)
        }
        await #expect(throws: StorageError.self) {
            try await outbox.delete(path("absent"), preconditions: .none, recording: recorder)
        }
        #expect(try await recorded().isEmpty)
        // Without a recorder nothing is recorded either.
        try await put("kept", [2])
        _ = try await backend.updateMetadata(path("kept"), patch: MetadataPatch(), preconditions: .none)
        try await backend.delete(path("kept"), preconditions: .none)
        #expect(try await recorded().isEmpty)
        #expect(try await ledger.pendingCount() == 0)
    }

    struct Refusal: Error {}
}

/// Every change a recorder was asked to render, in order.
final class RenderedChanges: Sendable {
    private let state = Mutex<[ObjectChange]>([])

    func render(_ change: ObjectChange) -> ChangeEvent {
        state.withLock { $0.append(change) }
        let text = "\(change.kind.rawValue) \(change.object.generation)/\(change.object.metageneration)"
        return ChangeEvent(
            id: "\(change.kind)-\(change.object.generation)-\(change.object.metageneration)",
            kind: change.kind, bucket: change.object.bucket, name: change.object.name,
            time: change.time, body: Array(text.utf8))
    }

    var all: [ObjectChange] { state.withLock { $0 } }
    func reset() { state.withLock { $0 = [] } }
}
