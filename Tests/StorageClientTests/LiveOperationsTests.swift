import Foundation
import Testing

@testable import StorageClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK against a live `portcullis serve`: every reference operation and the error mapping.
@Suite(.serialized) struct LiveOperationsTests {
    let server = TestServer.shared
    var storage: Storage {
        Storage(bucket: TestServer.bucket, host: "127.0.0.1:\(server.port)", settings: fastRetries())
    }

    func fastRetries() -> StorageSettings {
        var settings = StorageSettings()
        settings.maxOperationRetryTime = 2
        settings.initialRetryDelay = 0.05
        return settings
    }

    @Test func roundTripsAnObject() async throws {
        let ref = storage.reference(withPath: "ok/roundtrip/hello.txt")
        var metadata = StorageMetadata(contentType: "text/plain", customMetadata: ["owner": "u1"])
        metadata.cacheControl = "max-age=60"
        let uploaded = try await ref.putData(Data("hello world".utf8), metadata: metadata).result()
        #expect(uploaded.path == "ok/roundtrip/hello.txt")
        #expect(uploaded.size == 11)
        #expect(uploaded.md5Hash == "XrY7u+Ae7tCTyyK7j1rNww==")
        #expect(uploaded.customMetadata == ["owner": "u1"])

        let fetched = try await ref.getMetadata()
        #expect(fetched.generation == uploaded.generation)
        #expect(fetched.contentType == "text/plain")
        #expect(try await ref.getData(maxSize: 100) == Data("hello world".utf8))

        var changed = fetched
        changed.cacheControl = nil
        changed.customMetadata["owner"] = nil
        changed.customMetadata["team"] = "ops"
        let updated = try await ref.updateMetadata(changed)
        #expect(updated.cacheControl == nil)
        #expect(updated.customMetadata == ["team": "ops"])
        #expect(updated.metageneration == fetched.metageneration + 1)

        let url = try await ref.downloadURL()
        #expect(url.absoluteString.contains("alt=media&token="))
        let (body, response) = try await URLSession.shared.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(body == Data("hello world".utf8))

        try await ref.delete()
        await #expect(throws: StorageError.self) { try await ref.getMetadata() }
        do {
            _ = try await ref.getMetadata()
        } catch {
            #expect(error.code == .objectNotFound)
        }
    }

    @Test func copiesOnTheServerWithMetadata() async throws {
        let source = storage.reference(withPath: "ok/copy/source.txt")
        var metadata = StorageMetadata(contentType: "text/plain", customMetadata: ["owner": "u1"])
        metadata.cacheControl = "max-age=60"
        let uploaded = try await source.putData(Data("copy me".utf8), metadata: metadata).result()
        let destination = storage.reference(withPath: "ok/copy/nested/destination.txt")
        let copied = try await source.copy(to: destination)
        #expect(copied.path == "ok/copy/nested/destination.txt")
        #expect(copied.md5Hash == uploaded.md5Hash)
        #expect(copied.contentType == "text/plain" && copied.cacheControl == "max-age=60")
        #expect(copied.customMetadata == ["owner": "u1"])
        #expect(try await destination.getData(maxSize: 100) == Data("copy me".utf8))
        await #expect(throws: StorageError.self) {
            try await storage.reference(withPath: "ok/copy/missing.txt").copy(to: destination)
        }
        let stale = await #expect(throws: StorageError.self) {
            try await source.copy(to: destination, ifSourceGeneration: uploaded.generation + 1)
        }
        #expect(stale?.httpStatus == 412)
        let pinned = try await source.copy(to: destination, ifSourceGeneration: uploaded.generation)
        #expect(pinned.md5Hash == uploaded.md5Hash)
    }

    @Test func listsWithPagination() async throws {
        let folder = storage.reference(withPath: "ok/list-\(UUID().uuidString.prefix(8))")
        for i in 0..<7 { _ = try await folder.child("f\(i).txt").putData(Data([UInt8(i)])).result() }
        _ = try await folder.child("sub/deep.txt").putData(Data([1])).result()
        let first = try await folder.list(maxResults: 3)
        #expect(first.items.count + first.prefixes.count == 3)
        #expect(first.pageToken != nil)
        let all = try await folder.listAll()
        #expect(all.items.map(\.name) == (0..<7).map { "f\($0).txt" })
        #expect(all.prefixes.map(\.fullPath) == [folder.fullPath + "/sub"])
        await #expect(throws: StorageError.self) { try await folder.list(maxResults: 0) }
        await #expect(throws: StorageError.self) { try await folder.list(maxResults: 1001) }
    }

    @Test func mapsServerErrors() async throws {
        let denied = storage.reference(withPath: "denied/x.txt")
        do {
            _ = try await denied.getMetadata()
            Issue.record("expected a denial")
        } catch {
            #expect(error.code == .unauthorized)
            #expect(error.httpStatus == 403)
        }
        let upload = denied.putData(Data("x".utf8))
        do {
            _ = try await upload.result()
            Issue.record("expected a denial")
        } catch {
            #expect(error.code == .unauthorized)
        }
    }

    @Test func getDataEnforcesMaxSize() async throws {
        let ref = storage.reference(withPath: "ok/big/\(UUID().uuidString).bin")
        _ = try await ref.putData(patternedData(count: 300_000, seed: 1)).result()
        do {
            _ = try await ref.getData(maxSize: 1000)
            Issue.record("expected downloadSizeExceeded")
        } catch {
            #expect(error.code == .downloadSizeExceeded)
        }
        #expect(try await ref.getData(maxSize: 300_000).count == 300_000)
    }

    @Test func signedURLsWork() async throws {
        let ref = storage.reference(withPath: "ok/signed/\(UUID().uuidString).txt")
        _ = try await ref.putData(Data("signed".utf8)).result()
        let (url, expiresAt) = try await ref.signedURL(expiresIn: 60)
        #expect(!expiresAt.isEmpty)
        let (body, response) = try await URLSession.shared.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(body == Data("signed".utf8))
    }
}
