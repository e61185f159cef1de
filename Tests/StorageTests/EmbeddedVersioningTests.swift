import PortcullisCore
import Testing

@testable import Storage

/// `VersionedStorage` on the embedded backend: a bucket whose `versioning.enabled` is on keeps the generations
/// that overwrites and deletes replace, as noncurrent rows that still own their blobs.
@Suite struct EmbeddedVersioningTests {
    /// A bucket created through a bucket root in `directory`, with versioning as given.
    static func bucket(_ directory: TemporaryDirectory, versioning: Bool) async throws -> (
        EmbeddedBucketRoot, EmbeddedBackend
    ) {
        let root = try EmbeddedBucketRoot(directory: directory.path)
        let created = try await root.createBucket("versioned", settings: BucketSettings(versioningEnabled: versioning))
        return (root, try #require(created.backend as? EmbeddedBackend))
    }

    static func path(_ name: String) throws -> ObjectPath { try ObjectPath(bucket: "versioned", name: name) }

    static func put(_ backend: EmbeddedBackend, _ name: String, _ text: String) async throws -> ObjectMetadata {
        try await backend.write(
            path(name), body: BufferByteStream(Array(text.utf8)), attributes: ObjectAttributes(),
            options: WriteOptions())
    }

    static func listAll(_ backend: EmbeddedBackend, maxResults: Int = 1000) async throws -> [ObjectMetadata] {
        var objects: [ObjectMetadata] = []
        var cursor: String?
        repeat {
            let page = try await backend.listVersions(
                ListRequest(
                    bucket: "versioned", prefix: "", delimiter: nil, maxResults: maxResults, cursor: cursor,
                    firebaseView: false))
            #expect(page.items.count == page.objects.count)
            objects += page.objects
            cursor = page.nextCursor
        } while cursor != nil
        return objects
    }

    @Test func overwritesAndDeletesKeepNoncurrentGenerations() async throws {
        let directory = TemporaryDirectory()
        let (_, backend) = try await Self.bucket(directory, versioning: true)
        let first = try await Self.put(backend, "a", "one")
        let second = try await Self.put(backend, "a", "two")
        let old = try await backend.metadata(of: Self.path("a"), generation: first.generation)
        #expect(old.generation == first.generation && old.timeDeleted != nil && old.size == 3)
        #expect(try await backend.metadata(of: Self.path("a"), generation: second.generation).timeDeleted == nil)
        #expect(
            try await readAll(backend.read(Self.path("a"), generation: first.generation, range: nil).body)
                == Array("one".utf8))
        let ranged = try await backend.read(
            Self.path("a"), generation: first.generation, range: .fromTo(first: 1, last: 1))
        #expect(try await readAll(ranged.body) == Array("n".utf8))
        #expect(try await readAll(backend.read(Self.path("a"), range: nil).body) == Array("two".utf8))

        try await backend.delete(Self.path("a"), preconditions: .none)
        await #expect(throws: StorageError.self) { try await backend.metadata(of: Self.path("a")) }
        let kept = try await Self.listAll(backend)
        #expect(kept.map(\.generation) == [first.generation, second.generation])
        #expect(kept.allSatisfy { $0.timeDeleted != nil })
        // The live listing shows none of them.
        let live = try await backend.list(
            ListRequest(bucket: "versioned", prefix: "", delimiter: nil, maxResults: 10, cursor: nil))
        #expect(live.items.isEmpty)
    }

    @Test func deletingAGenerationRemovesItForGood() async throws {
        let directory = TemporaryDirectory()
        let (root, backend) = try await Self.bucket(directory, versioning: true)
        let first = try await Self.put(backend, "a", "one")
        let second = try await Self.put(backend, "a", "two")
        await #expect(throws: StorageError.self) {
            try await backend.deleteGeneration(
                Self.path("a"), generation: first.generation,
                preconditions: Preconditions(ifMetagenerationMatch: 9), recording: nil)
        }
        try await backend.deleteGeneration(
            Self.path("a"), generation: first.generation, preconditions: .none, recording: nil)
        await #expect(throws: StorageError.self) {
            try await backend.metadata(of: Self.path("a"), generation: first.generation)
        }
        // The live generation deleted by number leaves nothing behind, so the bucket may go.
        try await backend.deleteGeneration(
            Self.path("a"), generation: second.generation, preconditions: .none, recording: nil)
        #expect(try await Self.listAll(backend).isEmpty)
        try await root.deleteBucket("versioned")
    }

    @Test func noncurrentGenerationsKeepABucketFromBeingDeleted() async throws {
        let directory = TemporaryDirectory()
        let (root, backend) = try await Self.bucket(directory, versioning: true)
        _ = try await Self.put(backend, "a", "one")
        try await backend.delete(Self.path("a"), preconditions: .none)
        await #expect(throws: StorageError.self) { try await root.deleteBucket("versioned") }
    }

    @Test func aBucketWithoutVersioningKeepsNothing() async throws {
        let directory = TemporaryDirectory()
        let (root, backend) = try await Self.bucket(directory, versioning: false)
        let first = try await Self.put(backend, "a", "one")
        let second = try await Self.put(backend, "a", "two")
        await #expect(throws: StorageError.self) {
            try await backend.metadata(of: Self.path("a"), generation: first.generation)
        }
        #expect(try await Self.listAll(backend).map(\.generation) == [second.generation])
        // Turning versioning on keeps what is replaced from then on.
        _ = try await root.updateBucket(
            "versioned", settings: BucketSettings(versioningEnabled: true), ifMetagenerationMatch: nil)
        let third = try await Self.put(backend, "a", "three")
        #expect(try await Self.listAll(backend).map(\.generation) == [second.generation, third.generation])
    }

    @Test func listingPagesByNameWithEveryGenerationInOrder() async throws {
        let directory = TemporaryDirectory()
        let (_, backend) = try await Self.bucket(directory, versioning: true)
        var expected: [(String, Int64)] = []
        for name in ["b", "a", "c"] {
            for text in ["1", "2"] { expected.append((name, try await Self.put(backend, name, text).generation)) }
        }
        try await backend.delete(Self.path("c"), preconditions: .none)
        let listed = try await Self.listAll(backend, maxResults: 1)
        let sorted = expected.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
        #expect(listed.map(\.name) == sorted.map(\.0))
        #expect(listed.map(\.generation) == sorted.map(\.1))
    }

    @Test func noncurrentBlobsSurviveGarbageCollectionAndMovesKeepTheReplacedDestination() async throws {
        let directory = TemporaryDirectory()
        let (_, backend) = try await Self.bucket(directory, versioning: true)
        let first = try await Self.put(backend, "a", "one")
        _ = try await Self.put(backend, "a", "two")
        try GarbageCollector(store: backend.store).collect(graceSeconds: 0, includeBlobs: true)
        #expect(
            try await readAll(backend.read(Self.path("a"), generation: first.generation, range: nil).body)
                == Array("one".utf8))

        let source = try await Self.put(backend, "src", "moved")
        _ = try await backend.rename(
            Self.path("src"), generation: source.generation, to: Self.path("a"), preconditions: .none,
            recording: nil)
        let generations = try await Self.listAll(backend).filter { $0.name == "a" }
        #expect(generations.count == 3)
        #expect(try await readAll(backend.read(Self.path("a"), range: nil).body) == Array("moved".utf8))
    }
}
