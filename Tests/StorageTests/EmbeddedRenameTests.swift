import PortcullisCore
import Testing

@testable import Storage

/// `AtomicRenames` on the embedded backend: one commit moves the row; the bytes follow without a copy.
@Suite struct EmbeddedRenameTests {
    typealias Support = EmbeddedBackendTests

    /// The storage error `operation` fails with (nil: it succeeded).
    func failure(_ operation: () async throws -> Void) async -> StorageError? {
        do {
            try await operation()
            return nil
        } catch let error as StorageError {
            return error
        } catch {
            Issue.record("not a storage error: \(error)")
            return nil
        }
    }

    func isNotFound(_ error: StorageError?) -> Bool {
        if case .notFound? = error { true } else { false }
    }

    func isPreconditionFailed(_ error: StorageError?) -> Bool {
        if case .preconditionFailed? = error { true } else { false }
    }

    @Test func renameMovesTheRowAndKeepsTheBytes() async throws {
        let directory = TemporaryDirectory()
        let backend = try Support.openBackend(directory)
        let source = try await Support.put(backend, "from", Array("moving bytes".utf8))
        let moved = try await backend.rename(
            Support.path("from"), generation: source.generation, to: Support.path("to"),
            preconditions: Preconditions(ifGenerationMatch: 0), recording: nil)
        #expect(moved.name == "to" && moved.generation > source.generation && moved.metageneration == 1)
        #expect(moved.size == source.size && moved.md5Hash == source.md5Hash)
        #expect(isNotFound(await failure { _ = try await backend.metadata(of: Support.path("from")) }))
        let read = try await backend.read(Support.path("to"), range: nil)
        #expect(try await readAll(read.body) == Array("moving bytes".utf8))
    }

    @Test func renameChecksTheSourceGenerationAndTheDestinationPreconditions() async throws {
        let directory = TemporaryDirectory()
        let backend = try Support.openBackend(directory)
        let source = try await Support.put(backend, "a", Array("a".utf8))
        let other = try await Support.put(backend, "b", Array("b".utf8))
        let staleGeneration = await failure {
            _ = try await backend.rename(
                Support.path("a"), generation: source.generation + 1, to: Support.path("c"),
                preconditions: Preconditions(), recording: nil)
        }
        #expect(isPreconditionFailed(staleGeneration))
        let destinationTaken = await failure {
            _ = try await backend.rename(
                Support.path("a"), generation: source.generation, to: Support.path("b"),
                preconditions: Preconditions(ifGenerationMatch: 0), recording: nil)
        }
        #expect(isPreconditionFailed(destinationTaken))
        let missingSource = await failure {
            _ = try await backend.rename(
                Support.path("missing"), generation: 1, to: Support.path("c"), preconditions: Preconditions(),
                recording: nil)
        }
        #expect(isNotFound(missingSource))
        // Nothing moved; then a rename over `b` replaces it.
        #expect(try await backend.metadata(of: Support.path("a")).generation == source.generation)
        let moved = try await backend.rename(
            Support.path("a"), generation: source.generation, to: Support.path("b"),
            preconditions: Preconditions(ifGenerationMatch: other.generation), recording: nil)
        let read = try await backend.read(Support.path("b"), range: nil)
        #expect(try await readAll(read.body) == Array("a".utf8))
        #expect(moved.generation > other.generation)
    }
}
