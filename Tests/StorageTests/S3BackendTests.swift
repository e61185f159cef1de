import Foundation
import PortcullisCore
import Testing
import Upstream

@testable import Storage

/// Our SigV4 signer against the worked examples of the AWS S3 documentation ("Signature Calculations for the
/// Authorization Header": GET bucket lifecycle, ListObjects), which use only host + x-amz-* headers as we do.
@Suite struct S3SignerTests {
    let signer = S3Signer(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE",
        secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", sessionToken: nil,
        region: "us-east-1")
    let date = Timestamp(rfc3339: "2013-05-24T00:00:00Z")!

    func signature(_ url: String) -> String? {
        let headers = signer.sign(
            method: "GET", url: url, headers: [], payloadHash: S3Signer.emptyPayloadHash, now: date)
        guard let auth = headers.first(ignoringCase: "authorization"), let range = auth.range(of: "Signature=") else {
            return nil
        }
        #expect(auth.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date,"))
        #expect(headers.first(ignoringCase: "x-amz-date") == "20130524T000000Z")
        return String(auth[range.upperBound...])
    }

    @Test func awsDocumentationExamples() {
        #expect(
            signature("https://examplebucket.s3.amazonaws.com/?lifecycle=")
                == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
        #expect(
            signature("https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J")
                == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test func canonicalQueryIsSortedAndEncoded() {
        #expect(S3Signer.canonicalQuery([("uploads", "")]) == "uploads=")
        #expect(
            S3Signer.canonicalQuery([("prefix", "a b/c"), ("list-type", "2"), ("delimiter", "/")])
                == "delimiter=%2F&list-type=2&prefix=a%20b%2Fc")
        #expect(S3Signer.canonicalQuery([("k", "b"), ("k", "a")]) == "k=a&k=b")
    }

    @Test func urlParts() {
        #expect(S3Signer.split("http://127.0.0.1:9000/b/a%20b/../c?x=1") == ("127.0.0.1:9000", "/b/a%20b/../c", "x=1"))
        #expect(S3Signer.split("https://B.s3.amazonaws.com:443/k") == ("b.s3.amazonaws.com", "/k", ""))
        #expect(S3Signer.amzDate(Timestamp(rfc3339: "2026-11-30T09:05:07.9Z")!) == "20261130T090507Z")
        #expect(S3Signer.trim("  a   b ") == "a b")
        #expect(S3Signer.trim("\t a \t\tb\t") == "a b")  // tabs too, as the verifier and botocore trim
    }
}

/// Multipart writes, the hidden staging area and SigV4 corner cases, on every S3 server that is running.
@Suite(
    .enabled(
        if: !S3Server.available.isEmpty,
        "no S3 server: PORTCULLIS_TEST_S3_ENDPOINT/_AUTH_ENDPOINT/_RGW_ENDPOINT are not set (run scripts/emulators.sh start, scripts/rgw.sh start)"
    ))
struct S3BackendTests {
    static let part = 5 << 20

    /// Raw keys under `prefix` and the number of open multipart uploads, bypassing the v0-level filtering.
    func upstreamState(_ backend: S3Backend, prefix: String) async throws -> (keys: [String], openUploads: Int) {
        let (_, listed) = try await backend.exchange(
            "GET", backend.url(nil, query: [("list-type", "2"), ("prefix", prefix)]),
            op: "test")
        let (_, uploads) = try await backend.exchange("GET", backend.url(nil, query: [("uploads", "")]), op: "test")
        let text = String(decoding: uploads, as: UTF8.self)
        return (try S3XMLDocument.parse(listed).keys, text.components(separatedBy: "<UploadId>").count - 1)
    }

    /// A stream of `bytes` in small pieces (like a client socket), with its length known or not.
    final class Pieces: ByteStream, @unchecked Sendable {
        private let lock = NSLock()
        private var offset = 0
        let bytes: [UInt8]
        let failAt: Int?
        let expectedLength: Int64?
        init(_ bytes: [UInt8], knownLength: Bool, failAt: Int? = nil, declared: Int? = nil) {
            self.bytes = bytes
            self.failAt = failAt
            expectedLength = knownLength ? Int64(declared ?? bytes.count) : nil
        }
        struct Failure: Error {}
        func next(maxLength: Int) async throws -> [UInt8]? {
            try lock.withLock {
                if let failAt, offset >= failAt { throw Failure() }
                guard offset < bytes.count else { return nil }
                let end = min(bytes.count, offset + min(maxLength, 100_000), failAt ?? .max)
                defer { offset = end }
                return Array(bytes[offset..<end])
            }
        }
        func cancel() {}
    }

    @Test(arguments: S3Server.available, [false, true])
    func multipartWriteRoundtrip(server: S3Server, multipartCopy: Bool) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(
            on: server, partBytes: Self.part, maxSingleCopyBytes: multipartCopy ? Int64(Self.part) : 5 << 30)
        let body = testBytes(2 * Self.part + 123_457, seed: 7)
        let object = try ObjectPath(bucket: bucket, name: "big/ä b+c.bin")
        let seen = SeenMetadata()
        let written = try await backend.write(
            object, body: Pieces(body, knownLength: false),
            attributes: ObjectAttributes(contentType: "video/mp4", customMetadata: ["a": "1", "a-b": "2", "a0": "3"]),
            options: WriteOptions(
                expectedMD5: md5Base64(body), expectedSize: Int64(body.count),
                beforeCommit: { seen.set($0) }))
        #expect(written.size == Int64(body.count) && written.md5Hash == md5Base64(body))
        #expect(seen.value?.md5Hash == written.md5Hash)
        let stored = try await backend.metadata(of: object)
        #expect(stored.md5Hash == md5Base64(body) && stored.crc32c == written.crc32c && stored.size == written.size)
        #expect(stored.generation == written.generation && stored.contentType == "video/mp4")
        #expect(stored.customMetadata == ["a": "1", "a-b": "2", "a0": "3"])
        let read = try await backend.read(
            object, range: .fromTo(first: Int64(Self.part) - 10, last: Int64(Self.part) + 9))
        #expect(try await readAll(read.body) == Array(body[(Self.part - 10)..<(Self.part + 10)]))
        #expect(try await readAll(try await backend.read(object, range: nil).body) == body)
        // A metadata update of a multipart object (self-copy, multipart when above maxSingleCopyBytes).
        var patch = MetadataPatch()
        patch.customMetadata = ["a": "9"]
        let updated = try await backend.updateMetadata(object, patch: patch, preconditions: .none)
        #expect(updated.md5Hash == md5Base64(body) && updated.size == Int64(body.count) && updated.metageneration == 2)
        #expect(updated.customMetadata["a"] == "9")
        let state = try await upstreamState(backend, prefix: "")
        #expect(state.keys == ["big/ä b+c.bin"] && state.openUploads == 0)
    }

    @Test(arguments: S3Server.available)
    func failedMultipartWritesLeaveNothing(server: S3Server) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(on: server, partBytes: Self.part)
        let body = testBytes(2 * Self.part + 5, seed: 3)
        let object = try ObjectPath(bucket: bucket, name: "f")
        do {
            _ = try await backend.write(
                object, body: Pieces(body, knownLength: false, failAt: Self.part + 200_000),
                attributes: ObjectAttributes(), options: WriteOptions())
            Issue.record("a failing body must fail the write")
        } catch {
            guard case .bodyFailed = error else { Issue.record("got \(error)"); return }
        }
        struct No: Error {}
        for options in [
            WriteOptions(beforeCommit: { _ in throw No() }), WriteOptions(expectedMD5: "AAAAAAAAAAAAAAAAAAAAAA=="),
        ] {
            do {
                _ = try await backend.write(
                    object, body: Pieces(body, knownLength: true), attributes: ObjectAttributes(),
                    options: options)
                Issue.record("the write must be refused")
            } catch {}
        }
        let state = try await upstreamState(backend, prefix: "")
        #expect(state.keys.isEmpty && state.openUploads == 0)
    }

    /// Headers our signer canonicalizes (inner runs of spaces, names sharing a prefix) pass the verifier.
    @Test(arguments: S3Server.verifying)
    func awkwardHeadersSign(server: S3Server) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(on: server)
        let object = try ObjectPath(bucket: bucket, name: "h")
        let custom = ["sp": "x  y   z", "a": "1", "a-b": "2", "a.c": "3", "a0": "4"]
        _ = try await backend.write(
            object, body: BufferByteStream([1]),
            attributes: ObjectAttributes(
                contentType: "text/plain;  charset=utf-8",
                customMetadata: custom),
            options: WriteOptions())
        #expect(try await backend.metadata(of: object).customMetadata == custom)
        var patch = MetadataPatch()
        patch.customMetadata = ["a-b": nil, "b": "  lead"]
        let updated = try await backend.updateMetadata(object, patch: patch, preconditions: .none)
        #expect(updated.customMetadata == ["sp": "x  y   z", "a": "1", "a.c": "3", "a0": "4", "b": "  lead"])
    }

    @Test(arguments: S3Server.verifying)
    func stagingNamesAreHidden(server: S3Server) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(on: server)
        for name in ["-", ".p", ".portcullis-staging", "z"] {
            _ = try await backend.write(
                ObjectPath(bucket: bucket, name: name), body: BufferByteStream([1]),
                attributes: ObjectAttributes(), options: WriteOptions())
        }
        let object = try ObjectPath(bucket: bucket, name: "up")
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        _ = try await backend.appendChunk(handle, object: object, offset: 0, body: BufferByteStream([1, 2, 3]))
        let staged = try await upstreamState(backend, prefix: S3Backend.stagingPrefix).keys
        #expect(staged.count == 2)
        for pageSize in [1, 2, 1000] {
            var names = [String]()
            var cursor: String?
            repeat {
                let page = try await backend.list(
                    ListRequest(
                        bucket: bucket, prefix: "", delimiter: "/",
                        maxResults: pageSize, cursor: cursor))
                names += page.items + page.prefixes
                cursor = page.nextCursor
            } while cursor != nil
            #expect(names.sorted() == ["-", ".p", ".portcullis-staging", "z"], "page size \(pageSize)")
        }
        #expect(throws: ObjectPathError.reservedName) { try ObjectPath(bucket: bucket, name: staged[0]) }
        let hidden = try ObjectPath(bucket: bucket, reservedName: staged[0])
        await #expect(throws: StorageError.self) { try await backend.metadata(of: hidden) }
        await #expect(throws: StorageError.self) {
            try await backend.write(
                hidden, body: BufferByteStream([1]), attributes: ObjectAttributes(), options: WriteOptions())
        }
        await #expect(throws: StorageError.self) { try await backend.delete(hidden, preconditions: .none) }
        #expect(
            try await backend.list(
                ListRequest(
                    bucket: bucket, prefix: S3Backend.stagingPrefix, delimiter: nil,
                    maxResults: 10, cursor: nil)
            ).items.isEmpty)
    }

    /// Two metadata updates of one version at once: exactly one lands, the other sees the new metageneration
    /// (412 with the same `ifMetagenerationMatch`); no claim key is left behind.
    @Test(arguments: S3Server.available)
    func concurrentMetadataUpdatesOfOneVersion(server: S3Server) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(on: server)
        let object = try ObjectPath(bucket: bucket, name: "m/ü.txt")
        _ = try await backend.write(
            object, body: BufferByteStream([1, 2, 3]), attributes: ObjectAttributes(), options: WriteOptions())
        for round in 1...10 {
            let current = try await backend.metadata(of: object).metageneration
            var expected = Preconditions()
            expected.ifMetagenerationMatch = current
            let preconditions = expected
            let results = await withTaskGroup(of: Result<ObjectMetadata, StorageError>.self) { group in
                for who in ["a", "b"] {
                    group.addTask {
                        var patch = MetadataPatch()
                        patch.customMetadata = ["who": "\(who)\(round)"]
                        do throws(StorageError) {
                            return .success(
                                try await backend.updateMetadata(object, patch: patch, preconditions: preconditions))
                        } catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let won = results.compactMap { try? $0.get() }
            let refused = results.filter { if case .failure(.preconditionFailed) = $0 { true } else { false } }
            #expect(won.count == 1 && refused.count == 1, "round \(round): \(results)")
            let stored = try await backend.metadata(of: object)
            #expect(stored.metageneration == current + 1 && stored.customMetadata == won.first?.customMetadata)
        }
        #expect(try await upstreamState(backend, prefix: S3Backend.stagingPrefix).keys.isEmpty)
    }

    /// Two create-only writes (`ifGenerationMatch: 0`) of one new name at once: the engine lets one PUT in.
    @Test(arguments: S3Server.available)
    func concurrentCreateOnlyWrites(server: S3Server) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(on: server)
        for round in 1...10 {
            let object = try ObjectPath(bucket: bucket, name: "c/\(round)")
            let results = await withTaskGroup(of: Result<ObjectMetadata, StorageError>.self) { group in
                for byte: UInt8 in [1, 2] {
                    group.addTask {
                        do throws(StorageError) {
                            return .success(
                                try await backend.write(
                                    object, body: BufferByteStream([byte]), attributes: ObjectAttributes(),
                                    options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: 0))))
                        } catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let won = results.compactMap { try? $0.get() }
            let refused = results.filter { if case .failure(.preconditionFailed) = $0 { true } else { false } }
            #expect(won.count == 1 && refused.count == 1, "round \(round): \(results)")
            #expect(try await backend.metadata(of: object).md5Hash == won.first?.md5Hash)
        }
    }

    /// A claim left by an update that died is taken over once its lease has run out; a live one is waited for.
    @Test(arguments: S3Server.available)
    func abandonedClaimIsTakenOver(server: S3Server) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(on: server)
        let object = try ObjectPath(bucket: bucket, name: "m")
        let written = try await backend.write(
            object, body: BufferByteStream([1]), attributes: ObjectAttributes(), options: WriteOptions())
        let claim = S3Backend.claimKey(object.name, generation: written.generation, metageneration: 1)
        // Expired a second ago: as a holder that crashed between its claim and its copy leaves it.
        _ = try await backend.exchange(
            "PUT", backend.url(claim),
            headers: [
                ("x-amz-meta-portcullis-expires", String(Timestamp.now().nanosecondsSinceEpoch / 1000 - 1_000_000))
            ],
            body: [], op: "test")
        var patch = MetadataPatch()
        patch.customMetadata = ["k": "v"]
        let updated = try await backend.updateMetadata(object, patch: patch, preconditions: .none)
        #expect(updated.metageneration == 2 && updated.customMetadata == ["k": "v"])
        #expect(try await upstreamState(backend, prefix: S3Backend.stagingPrefix).keys.isEmpty)
    }

    /// Chunks of growing sizes (as the JS SDK sends them), streamed with their lengths, finalized through a
    /// multipart write; a chunk that breaks off midway stores nothing.
    @Test(arguments: S3Server.available)
    func resumableAcrossPartsAndInstances(server: S3Server) async throws {
        let (backend, bucket) = try await S3TestEnvironment.freshBackend(on: server, partBytes: Self.part)
        // A second instance (its own backend object) continues the same upload: no in-memory state.
        let other = S3Backend(configuration: backend.configuration, client: S3TestEnvironment.client)
        // With 5 MiB parts: part 1 = the first four chunks + 1.25 MiB of the fifth (read back), part 2 = its
        // rest + 2.25 MiB of the 12 MiB chunk, part 3 = a server-side copy of that chunk's last 9.75 MiB,
        // part 4 = the last 1,000 bytes.
        let sizes = [256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 12 << 20, 1_000]
        let body = testBytes(sizes.reduce(0, +), seed: 11)
        let object = try ObjectPath(bucket: bucket, name: "r/ü.bin")
        let handle = try await backend.startUpload(
            object, attributes: ObjectAttributes(contentType: "image/png"),
            declaredSize: Int64(body.count))
        var offset = 0
        for (index, size) in sizes.enumerated() {
            let instance = index % 2 == 0 ? backend : other
            if index == 3 {
                do {
                    _ = try await instance.appendChunk(
                        handle, object: object, offset: Int64(offset),
                        body: Pieces(
                            Array(body[offset..<(offset + size)]), knownLength: true,
                            failAt: 300_000))
                    Issue.record("a chunk that breaks off must fail")
                } catch {}
                #expect(try await instance.stagedSize(handle, object: object) == Int64(offset))
            }
            let staged = try await instance.appendChunk(
                handle, object: object, offset: Int64(offset),
                body: Pieces(Array(body[offset..<(offset + size)]), knownLength: true))
            offset += size
            #expect(staged == Int64(offset))
            if index == 0 {
                // A late duplicate of a stored chunk (the race `load` cannot see) is refused by If-None-Match.
                do {
                    try await other.storeChunk(
                        S3Backend.uploadFolder(handle) + S3Backend.chunkName(0), body: .bytes([9]),
                        handle: handle, object: object)
                    Issue.record("a chunk must not be stored twice")
                } catch {
                    guard case .offsetMismatch(Int64(offset)) = error else { Issue.record("got \(error)"); return }
                }
            }
        }
        #expect(try await other.uploadState(handle, object: object) == .active(stagedSize: Int64(body.count)))
        // A chunk of unknown length (chunked request) is buffered up to one part; a bigger one is refused whole.
        let loose = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        #expect(
            try await backend.appendChunk(
                loose, object: object, offset: 0,
                body: Pieces(testBytes(300_000, seed: 1), knownLength: false)) == 300_000)
        do {
            _ = try await backend.appendChunk(
                loose, object: object, offset: 300_000,
                body: Pieces(testBytes(Self.part + 1, seed: 2), knownLength: false))
            Issue.record("an unknown-length chunk over one part must be refused")
        } catch {
            guard case .bodyFailed(let inner) = error, case .limitExceeded? = inner as? ByteStreamError else {
                Issue.record("got \(error)"); return
            }
        }
        #expect(try await backend.stagedSize(loose, object: object) == 300_000)
        try await backend.cancelUpload(loose, object: object)
        #expect(try await backend.uploadState(loose, object: object) == .cancelled)
        let metadata = try await other.finalizeUpload(
            handle, object: object,
            attributes: ObjectAttributes(contentType: "image/png"),
            options: WriteOptions(expectedMD5: md5Base64(body)))
        #expect(metadata.size == Int64(body.count) && metadata.md5Hash == md5Base64(body))
        #expect(try await readAll(try await backend.read(object, range: nil).body) == body)
        #expect(
            try await backend.uploadState(handle, object: object)
                == .finalized(size: Int64(body.count), generation: metadata.generation))
        let state = try await upstreamState(backend, prefix: "")
        #expect(state.openUploads == 0)
        #expect(state.keys.filter { !$0.hasPrefix(S3Backend.stagingPrefix + "r/") } == ["r/ü.bin"])
        #expect(state.keys.filter { $0.contains("/c-") }.isEmpty, "chunks are released after finalize")
    }
}
