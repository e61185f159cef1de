import CloudStorageWire
import Foundation
import PortcullisCore
import Rules
import Storage
import Synchronization
import Testing

@testable import Service

/// The service's change-event hook: every committing operation records its events, exactly once, and only
/// when it committed — through the outbox on the embedded backend, through the sink's queue elsewhere.
@Suite struct ServiceEventsTests {
    /// Records what the service hands over.
    final class RecordingSink: ChangeEventSink {
        private let state = Mutex<(published: [ChangeEvent], recorded: Int)>(([], 0))
        func event(_ kind: ChangeKind, of object: ObjectMetadata, at time: Timestamp) -> ChangeEvent {
            ChangeEvent(
                id: UUID().uuidString, kind: kind, bucket: object.bucket, name: object.name, time: time,
                body: ObjectResource.json(object))
        }
        func publish(_ events: [ChangeEvent]) { state.withLock { $0.published += events } }
        func recorded() { state.withLock { $0.recorded += 1 } }
        var published: [ChangeEvent] { state.withLock { $0.published } }
        var recordedCount: Int { state.withLock { $0.recorded } }
    }

    /// The embedded backend with its outbox ability hidden: stands for gs:// and s3://.
    struct NoOutbox: StorageBackend {
        let inner: EmbeddedBackend
        func metadata(of object: ObjectPath) async throws(StorageError) -> ObjectMetadata {
            try await inner.metadata(of: object)
        }
        func read(_ object: ObjectPath, range: ByteRangeSpec?) async throws(StorageError) -> ObjectRead {
            try await inner.read(object, range: range)
        }
        func list(_ request: ListRequest) async throws(StorageError) -> ListPage { try await inner.list(request) }
        func write(
            _ object: ObjectPath, body: any ByteStream, attributes: ObjectAttributes,
            options: WriteOptions
        ) async throws(StorageError) -> ObjectMetadata {
            try await inner.write(object, body: body, attributes: attributes, options: options)
        }
        func updateMetadata(
            _ object: ObjectPath, patch: MetadataPatch,
            preconditions: Preconditions
        ) async throws(StorageError) -> ObjectMetadata {
            try await inner.updateMetadata(object, patch: patch, preconditions: preconditions)
        }
        func delete(_ object: ObjectPath, preconditions: Preconditions) async throws(StorageError) {
            try await inner.delete(object, preconditions: preconditions)
        }
        func isReady() async -> Bool { true }
    }

    struct Setup {
        let sink = RecordingSink()
        let embedded: EmbeddedBackend
        let service: StorageService
        let context = RequestContext.recorded().0
        let admin = Caller(principal: .admin)

        init(outbox: Bool, events: Bool = true) throws {
            let dir = NSTemporaryDirectory() + "service-events-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            embedded = try EmbeddedBackend.open(directory: dir, bucket: "b")
            let backend: any StorageBackend = outbox ? embedded : NoOutbox(inner: embedded)
            service = StorageService(
                configuration: ServiceConfiguration(), backends: ["b": backend],
                sealer: CapabilitySealer(keys: [SigningKey(id: "k", secret: Array("secret".utf8))]),
                rules: RulesStore(fixed: AllowAll()), metrics: MetricsRegistry(), logger: .disabled,
                events: events ? sink : nil)
        }

        func upload(
            _ name: String, _ bytes: [UInt8], preconditions: Preconditions = .none,
            mint: Bool = true
        ) async throws -> ObjectMetadata {
            let object = try ObjectPath(bucket: "b", name: name)
            return try await service.upload(
                UploadRequest(
                    object: object, attributes: ObjectAttributes(contentType: "text/plain"),
                    preconditions: preconditions, mintDownloadToken: mint),
                body: BufferByteStream(bytes), caller: admin, context)
        }

        /// The outbox's events, drained (kind and generation/metageneration of the object in the body).
        func outboxEvents() async throws -> [ChangeEvent] {
            let ledger = embedded.eventLedger
            var out: [ChangeEvent] = []
            while true {
                let now = Timestamp.now()
                let claims = try await ledger.claim(
                    webhooks: ["w"], now: now, limit: 100, leaseUntil: now.adding(.seconds(60)))
                if claims.isEmpty { return out }
                for claim in claims {
                    out.append(claim.event)
                    try await ledger.acknowledge(claim)
                }
            }
        }
    }

    /// Drives every committing operation once, plus two that fail.
    static func exercise(_ s: Setup) async throws -> (first: ObjectMetadata, second: ObjectMetadata) {
        let object = try ObjectPath(bucket: "b", name: "dir/a b.txt")
        let first = try await s.upload("dir/a b.txt", [1, 2, 3], mint: false)
        // A metadata read mints the first download token (v0): a metadata update.
        _ = try await s.service.metadata(
            of: object, caller: Caller(), conditions: .none, ensureDownloadToken: true, s.context)
        var patch = MetadataPatch()
        patch.customMetadata = ["k": "v"]
        _ = try await s.service.updateMetadata(object, .merge(patch), conditions: .none, caller: s.admin, s.context)
        _ = try await s.service.manageDownloadToken(object, removing: nil, caller: s.admin, s.context)
        let second = try await s.upload("dir/a b.txt", [4])
        // Failures record nothing.
        await #expect(throws: ServiceError.self) {
            _ = try await s.upload("dir/a b.txt", [5], preconditions: Preconditions(ifGenerationMatch: 0))
        }
        await #expect(throws: ServiceError.self) {
            try await s.service.delete(
                try ObjectPath(bucket: "b", name: "missing"), conditions: .none, caller: s.admin, s.context)
        }
        try await s.service.delete(object, conditions: .none, caller: s.admin, s.context)
        return (first, second)
    }

    static func expectedSequence(_ first: ObjectMetadata, _ second: ObjectMetadata) -> [String] {
        [
            "finalized \(first.generation)/1", "metadataUpdated \(first.generation)/2",
            "metadataUpdated \(first.generation)/3",
            "metadataUpdated \(first.generation)/4", "deleted \(first.generation)/4",
            "finalized \(second.generation)/1",
            "deleted \(second.generation)/1",
        ]
    }

    static func summary(_ events: [ChangeEvent]) throws -> [String] {
        try events.map { event in
            let body = try #require(try JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any])
            #expect(body["name"] as? String == "dir/a b.txt")
            #expect(event.name == "dir/a b.txt" && event.bucket == "b")
            return
                "\(event.kind.rawValue) \(body["generation"] as? String ?? "?")/\(body["metageneration"] as? String ?? "?")"
        }
    }

    @Test func embeddedCommitsRecordInTheOutboxAndWakeTheSink() async throws {
        let s = try Setup(outbox: true)
        let (first, second) = try await Self.exercise(s)
        let events = try await s.outboxEvents()
        #expect(try Self.summary(events) == Self.expectedSequence(first, second))
        #expect(Set(events.map(\.id)).count == events.count)
        #expect(s.sink.published.isEmpty)
        // One wake-up per committing call: upload, mint, patch, token, overwrite, delete.
        #expect(s.sink.recordedCount == 6)
    }

    @Test func upstreamCommitsArePublishedAfterTheCall() async throws {
        let s = try Setup(outbox: false)
        let (first, second) = try await Self.exercise(s)
        #expect(try Self.summary(s.sink.published) == Self.expectedSequence(first, second))
        #expect(s.sink.recordedCount == 0)
        #expect(try await s.outboxEvents().isEmpty)
    }

    @Test func noSinkNoEvents() async throws {
        let s = try Setup(outbox: true, events: false)
        _ = try await Self.exercise(s)
        #expect(try await s.outboxEvents().isEmpty)
    }

    @Test func eventTimeIsTheCommitTime() async throws {
        let s = try Setup(outbox: true)
        let meta = try await s.upload("t", [1])
        let event = try #require(try await s.outboxEvents().first)
        #expect(event.time == meta.updated)
        #expect(event.kind == .finalized)
    }
}

struct AllowAll: RulesEngine {
    func evaluate(_ request: RulesRequest) -> RulesDecision { RulesDecision(allowed: true) }
    func explain(_ request: RulesRequest) -> RulesDecision { RulesDecision(allowed: true) }
}
