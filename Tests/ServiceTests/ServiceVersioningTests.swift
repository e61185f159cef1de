import Foundation
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Service

/// The service over a versioned embedded bucket: `generation=` reaches noncurrent generations for reads,
/// copy sources and deletes; `versions` lists them; the rules judge a named generation on the object's path
/// with `resource` = that generation.
@Suite struct ServiceVersioningTests {
    struct Setup {
        let service: StorageService
        let embedded: EmbeddedBackend
        let context = RequestContext.recorded().0
        let admin = Caller(principal: .admin)
        let user = Caller(principal: Principal(uid: "u", claims: ["sub": .string("u")]))

        /// Users may read an object of at most 3 bytes, and delete anything.
        init(events: (any ChangeEventSink)? = nil) async throws {
            let dir = NSTemporaryDirectory() + "service-versions-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let root = try EmbeddedBucketRoot(directory: dir)
            let created = try await root.createBucket("v", settings: BucketSettings(versioningEnabled: true))
            embedded = try #require(created.backend as? EmbeddedBackend)
            let rules = RulesStore(logger: .disabled)
            _ = try rules.load(
                source: """
                    rules_version = '2';
                    service firebase.storage {
                      match /b/{bucket}/o/{p=**} {
                        allow read: if request.auth != null && resource.size <= 3;
                        allow delete: if request.auth != null;
                      }
                    }
                    """, fileName: "v.rules"
            ).get()
            service = StorageService(
                configuration: ServiceConfiguration(), backends: [:],
                sealer: CapabilitySealer(keys: [SigningKey(id: "k", secret: Array("secret".utf8))]),
                rules: rules, metrics: MetricsRegistry(), logger: .disabled, events: events, bucketRoot: root,
                provisioned: [created])
        }

        func put(_ name: String, _ text: String) async throws -> ObjectMetadata {
            try await service.upload(
                UploadRequest(
                    object: try ObjectPath(bucket: "v", name: name), attributes: ObjectAttributes(),
                    preconditions: .none, mintDownloadToken: false),
                body: BufferByteStream(Array(text.utf8)), caller: admin, context)
        }

        func read(_ name: String, generation: Int64?, caller: Caller) async throws -> [UInt8] {
            var conditions = Conditions()
            conditions.selectedGeneration = generation
            let outcome = try await service.read(
                try ObjectPath(bucket: "v", name: name), caller: caller, options: ReadOptions(conditions: conditions),
                context)
            guard case .content(let content) = outcome, let body = content.body else { return [] }
            var bytes: [UInt8] = []
            let stream = body.byteStream()
            while let chunk = try await stream.next(maxLength: 65536) { bytes += chunk }
            return bytes
        }
    }

    @Test func aNamedGenerationIsReadAndJudgedAsItself() async throws {
        let s = try await Setup()
        let small = try await s.put("a", "one")
        _ = try await s.put("a", "large")
        #expect(try await s.read("a", generation: small.generation, caller: s.user) == Array("one".utf8))
        // The live generation is too large for the user's rules; the noncurrent one was not.
        await #expect(throws: ServiceError.self) { _ = try await s.read("a", generation: nil, caller: s.user) }
        #expect(try await s.read("a", generation: nil, caller: s.admin) == Array("large".utf8))
        await #expect(throws: ServiceError.self) {
            _ = try await s.read("a", generation: small.generation + 12345, caller: s.admin)
        }
    }

    @Test func copySourceDeleteAndListingReachNoncurrentGenerations() async throws {
        let s = try await Setup()
        let first = try await s.put("a", "one")
        let second = try await s.put("a", "two")
        var source = Conditions()
        source.selectedGeneration = first.generation
        let restored = try await s.service.copy(
            CopyRequest(
                source: try ObjectPath(bucket: "v", name: "a"), sourceConditions: source,
                destination: try ObjectPath(bucket: "v", name: "b")), caller: s.admin, s.context)
        #expect(restored.md5Hash == first.md5Hash)

        let all = try await s.service.list(
            ListQuery(bucket: "v", firebaseView: false, includeMetadata: true, versions: true), caller: s.admin,
            s.context)
        #expect(all.items == ["a", "a", "b"])
        #expect(all.objects.map { $0?.generation } == [first.generation, second.generation, restored.generation])
        #expect(all.objects.first??.timeDeleted != nil)
        let live = try await s.service.list(
            ListQuery(bucket: "v", firebaseView: false, includeMetadata: true), caller: s.admin, s.context)
        #expect(live.items == ["a", "b"])

        var named = Conditions()
        named.selectedGeneration = first.generation
        try await s.service.delete(
            try ObjectPath(bucket: "v", name: "a"), conditions: named, caller: s.user, s.context)
        let after = try await s.service.list(
            ListQuery(bucket: "v", firebaseView: false, includeMetadata: true, versions: true), caller: s.admin,
            s.context)
        #expect(after.objects.map { $0?.generation } == [second.generation, restored.generation])
    }

    /// As Cloud Storage reports them: a live generation kept as noncurrent is `archived`, a generation removed
    /// for good (live or noncurrent, by number) is `deleted`.
    @Test func keptGenerationsAreArchivedAndRemovedOnesDeleted() async throws {
        let s = try await Setup(events: ServiceEventsTests.RecordingSink())
        let first = try await s.put("a", "one")
        let second = try await s.put("a", "two")
        let object = try ObjectPath(bucket: "v", name: "a")
        try await s.service.delete(object, conditions: .none, caller: s.admin, s.context)
        var named = Conditions()
        named.selectedGeneration = first.generation
        try await s.service.delete(object, conditions: named, caller: s.admin, s.context)
        var kinds: [String] = []
        let ledger = s.embedded.eventLedger
        while true {
            let now = Timestamp.now()
            let claims = try await ledger.claim(
                webhooks: ["w"], now: now, limit: 100, leaseUntil: now.adding(.seconds(60)))
            if claims.isEmpty { break }
            for claim in claims {
                kinds.append(claim.event.kind.rawValue)
                try await ledger.acknowledge(claim)
            }
        }
        #expect(kinds == ["finalized", "archived", "finalized", "archived", "deleted"])
        _ = second
    }
}
