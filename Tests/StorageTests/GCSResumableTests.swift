import Crypto
import Foundation
import PortcullisCore
import Testing
import Upstream

@testable import Storage

/// A body handing out its bytes in pieces, with or without announcing its length (chunked transfer).
final class PiecewiseStream: ByteStream, @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8]
    private var offset = 0
    let expectedLength: Int64?

    init(_ bytes: [UInt8], announceLength: Bool = true) {
        self.bytes = bytes
        expectedLength = announceLength ? Int64(bytes.count) : nil
    }

    func next(maxLength: Int) async throws -> [UInt8]? {
        lock.withLock {
            guard offset < bytes.count else { return nil }
            let end = min(bytes.count, offset + min(maxLength, 50_000))
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }

    func cancel() {}
}

/// A body announcing `length` bytes that fails after `prefix` (a client hanging up mid-chunk).
final class BrokenAnnouncedStream: ByteStream, @unchecked Sendable {
    private let inner: PiecewiseStream
    let expectedLength: Int64?
    struct Failure: Error {}

    init(prefix: [UInt8], length: Int) {
        inner = PiecewiseStream(prefix)
        expectedLength = Int64(length)
    }

    func next(maxLength: Int) async throws -> [UInt8]? {
        guard let piece = try await inner.next(maxLength: maxLength) else { throw Failure() }
        return piece
    }

    func cancel() {}
}

/// `GCSBackend` as `ResumableStaging`, beyond the shared contract: multi-MiB uploads continued by another
/// instance, unaligned and unannounced chunk lengths, handle validation, and the emulator's quirks.
@Suite(
    .enabled(
        if: GCSTestEnvironment.endpoint != nil,
        "PORTCULLIS_TEST_GCS_ENDPOINT is not set (run scripts/emulators.sh start)"))
struct GCSResumableTests {
    static let granule = 256 * 1024

    /// A few MiB in 256 KiB-multiple chunks, half of them through a second backend instance (stateless: the
    /// handle and the bucket are all it needs), finalized with the declared MD5 and read back.
    @Test func multiMiBUploadInAlignedChunksAcrossInstances() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let sibling = try GCSBackend(configuration: backend.configuration, client: GCSTestEnvironment.client)
        let body = testBytes(5 * (1 << 20) + 12_345, seed: 21)
        let object = try ObjectPath(bucket: bucket, name: "videos/clip.mp4")
        let attributes = ObjectAttributes(
            contentType: "video/mp4", customMetadata: ["owner": "alice"],
            downloadTokens: ["tok-1"])
        let handle = try await backend.startUpload(object, attributes: attributes, declaredSize: Int64(body.count))
        let chunk = 3 * Self.granule
        var offset = 0
        var turn = 0
        while offset < body.count {
            let end = min(body.count, offset + chunk)
            let staging: GCSBackend = turn % 2 == 0 ? backend : sibling
            let staged = try await staging.appendChunk(
                handle, object: object, offset: Int64(offset),
                body: PiecewiseStream(Array(body[offset..<end])))
            #expect(staged == Int64(end))
            offset = end
            turn += 1
            #expect(try await sibling.uploadState(handle, object: object) == .active(stagedSize: Int64(offset)))
        }
        try await expectAbsent(backend, object)
        let metadata = try await sibling.finalizeUpload(
            handle, object: object, attributes: attributes,
            options: WriteOptions(
                expectedMD5: md5Base64(body),
                expectedSize: Int64(body.count)))
        #expect(metadata.size == Int64(body.count))
        #expect(metadata.md5Hash == md5Base64(body))
        #expect(metadata.contentType == "video/mp4")
        #expect(metadata.customMetadata == ["owner": "alice"])
        #expect(metadata.downloadTokens == ["tok-1"])
        let read = try await backend.read(object, range: nil)
        #expect(try await readAll(read.body) == body)
        #expect(
            try await backend.uploadState(handle, object: object)
                == .finalized(size: Int64(body.count), generation: metadata.generation))
        // The upload's record stays out of listings.
        let page = try await backend.list(
            ListRequest(bucket: bucket, prefix: "", delimiter: nil, maxResults: 100, cursor: nil))
        #expect(page.items == ["videos/clip.mp4"])
        #expect(page.prefixes.isEmpty)
    }

    /// Chunks that end anywhere (GCS itself only takes 256 KiB multiples before the last request) and chunks
    /// without a length (spooled first) assemble exactly; `beforeCommit` sees the true size.
    @Test func unalignedAndUnannouncedChunks() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let body = testBytes(1_300_000, seed: 5)
        let object = try ObjectPath(bucket: bucket, name: "odd sizes/ünï.bin")
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        let cuts = [0, 100_000, 100_001, 400_000, 700_000, 1_048_576, 1_300_000]
        for (index, (start, end)) in zip(cuts, cuts.dropFirst()).enumerated() {
            let staged = try await backend.appendChunk(
                handle, object: object, offset: Int64(start),
                body: PiecewiseStream(
                    Array(body[start..<end]),
                    announceLength: index % 2 == 1))
            #expect(staged == Int64(end))
        }
        let seen = SeenMetadata()
        let metadata = try await backend.finalizeUpload(
            handle, object: object, attributes: ObjectAttributes(),
            options: WriteOptions(beforeCommit: { seen.set($0) }))
        #expect(seen.value?.size == Int64(body.count))
        #expect(metadata.size == Int64(body.count))
        // The hashes were known before the commit, and are the ones GCS computed.
        #expect(seen.value?.md5Hash == md5Base64(body) && metadata.md5Hash == md5Base64(body))
        #expect(seen.value?.crc32c != nil && seen.value?.crc32c == metadata.crc32c)
        #expect(try await readAll(backend.read(object, range: nil).body) == body)
        let page = try await backend.list(
            ListRequest(bucket: bucket, prefix: "", delimiter: "/", maxResults: 100, cursor: nil))
        #expect(page.items.isEmpty && page.prefixes == ["odd sizes/"])
    }

    /// `beforeCommit` refusing leaves the upload active and the object absent; a later finalize succeeds.
    @Test func rejectedFinalizeKeepsTheUpload() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let object = try ObjectPath(bucket: bucket, name: "guarded")
        let body = testBytes(300_000, seed: 8)
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: 300_000)
        _ = try await backend.appendChunk(handle, object: object, offset: 0, body: PiecewiseStream(body))
        struct Denied: Error {}
        do {
            _ = try await backend.finalizeUpload(
                handle, object: object, attributes: ObjectAttributes(),
                options: WriteOptions(beforeCommit: { _ in throw Denied() }))
            Issue.record("a refused beforeCommit must fail the finalize")
        } catch {
            guard case .rejected? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        try await expectAbsent(backend, object)
        #expect(try await backend.uploadState(handle, object: object) == .active(stagedSize: 300_000))
        let metadata = try await backend.finalizeUpload(
            handle, object: object, attributes: ObjectAttributes(),
            options: WriteOptions())
        #expect(metadata.size == 300_000)
    }

    /// A chunk whose body fails — before, inside or after its 256 KiB-aligned part — stores nothing: the aligned
    /// PUT is held open until the unaligned rest is in memory, so the failure aborts it.
    @Test func chunkFailingAnywhereStoresNothing() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let object = try ObjectPath(bucket: bucket, name: "flaky")
        let body = testBytes(700_000, seed: 13)
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: 700_000)
        _ = try await backend.appendChunk(
            handle, object: object, offset: 0, body: PiecewiseStream(Array(body[..<100_000])))
        // The chunk 100_000..<700_000 makes 524_288 aligned bytes with the tail; fail before, inside, after.
        for failAt in [50_000, 300_000, 450_000, 599_999] {
            do {
                _ = try await backend.appendChunk(
                    handle, object: object, offset: 100_000,
                    body: BrokenAnnouncedStream(
                        prefix: Array(body[100_000..<(100_000 + failAt)]), length: 600_000))
                Issue.record("a body failing after \(failAt) bytes must fail the chunk")
            } catch {
                guard case .bodyFailed? = asStorageError(error) else { Issue.record("got \(error)"); continue }
            }
            #expect(try await backend.stagedSize(handle, object: object) == 100_000, "after failing at \(failAt)")
        }
        _ = try await backend.appendChunk(
            handle, object: object, offset: 100_000, body: PiecewiseStream(Array(body[100_000...])))
        let metadata = try await backend.finalizeUpload(
            handle, object: object, attributes: ObjectAttributes(),
            options: WriteOptions(expectedMD5: md5Base64(body)))
        #expect(metadata.size == 700_000)
        #expect(try await readAll(backend.read(object, range: nil).body) == body)
    }

    /// A session GCS no longer knows (expired after a week; here ended behind our back) makes the upload
    /// unknown — `.notFound`, which the Gateway answers as an expired upload — instead of a stuck one.
    @Test func vanishedSessionMakesTheUploadUnknown() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let object = try ObjectPath(bucket: bucket, name: "expired")
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        let session = try #require(
            GCSUploadHandle(parsing: handle, object: object, sessionPrefix: backend.sessionPrefix)
        ).session
        // fake-gcs-server forgets a session once it commits it (quirk 4 below).
        _ = try await GCSTestEnvironment.client.fetch(
            UpstreamRequest(
                method: "PUT", url: session,
                headers: [("Content-Range", "bytes */0")]),
            maxBytes: 1 << 20)
        do {
            _ = try await backend.appendChunk(
                handle, object: object, offset: 0,
                body: PiecewiseStream(testBytes(Self.granule, seed: 3)))
            Issue.record("a chunk for a vanished session must fail")
        } catch {
            #expect(error.isNotFound, "\(error)")
        }
        do {
            _ = try await backend.uploadState(handle, object: object)
            Issue.record("the upload must be unknown now")
        } catch {
            #expect(error.isNotFound)
        }
    }

    /// Handles are checked before any request: another host, another bucket, another object, garbage.
    @Test func foreignHandlesAreNotFound() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let object = try ObjectPath(bucket: bucket, name: "a")
        let handle = try await backend.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        let parsed = try #require(
            GCSUploadHandle(parsing: handle, object: object, sessionPrefix: backend.sessionPrefix))
        let endpoint = try #require(GCSTestEnvironment.endpoint)
        var elsewhere = parsed
        elsewhere.session = "http://127.0.0.2:9/upload/storage/v1/b/\(bucket)/o?upload_id=x"
        var otherBucket = parsed
        otherBucket.session = parsed.session.replacingOccurrences(of: "/b/\(bucket)/", with: "/b/other-bucket/")
        var injected = parsed
        injected.session = parsed.session + "\r\nX-Evil: 1"
        var prefixTrick = parsed
        prefixTrick.session = "\(endpoint)@127.0.0.2/upload/storage/v1/b/\(bucket)/o?x"
        for foreign in [
            elsewhere.encoded, otherBucket.encoded, injected.encoded, prefixTrick.encoded,
            "0123456789abcdef0123456789abcdef", "gcs1.-.x." + parsed.session, "",
        ] {
            do {
                _ = try await backend.uploadState(foreign, object: object)
                Issue.record("handle \(foreign) must be refused")
            } catch {
                #expect(error.isNotFound, "\(error)")
            }
        }
        do {
            _ = try await backend.appendChunk(
                handle, object: try ObjectPath(bucket: bucket, name: "b"), offset: 0,
                body: PiecewiseStream([1]))
            Issue.record("a handle for another object must be refused")
        } catch {
            #expect(error.isNotFound)
        }
        #expect(try await backend.uploadState(handle, object: object) == .active(stagedSize: 0))
    }

    /// fake-gcs-server's resumable sessions differ from GCS's; these are why the backend keeps its own record
    /// instead of querying the session. If one of these starts failing, the emulator changed (re-check the
    /// backend's workarounds):
    /// 1. a status query (`PUT`, `Content-Range: bytes */*`, empty body) FINALIZES the upload (GCS answers 308
    ///    with the persisted `Range`);
    /// 2. the chunk's `Content-Range` start is not checked: bytes are appended wherever the client says they go,
    ///    and the 308's `Range` echoes the request, not what is stored;
    /// 3. `DELETE` of a session answers 499 but leaves the session usable (GCS ends it);
    /// 4. a finished session is forgotten (404), where GCS answers 200 with the object.
    @Test func fakeGCSServerResumableQuirks() async throws {
        let (backend, bucket) = try await GCSTestEnvironment.freshBackend()
        let client = GCSTestEnvironment.client
        func session(_ name: String) async throws -> String {
            try await backend.startSession(
                try ObjectPath(bucket: bucket, name: name), attributes: ObjectAttributes(),
                preconditions: .none)
        }
        func put(_ url: String, _ range: String, _ body: [UInt8]) async throws -> (
            status: Int, headers: [(String, String)]
        ) {
            let r = try await client.fetch(
                UpstreamRequest(
                    method: "PUT", url: url, headers: [("Content-Range", range)],
                    body: .bytes(body)), maxBytes: 1 << 20)
            return (r.status, r.headers)
        }
        // 1. The query commits an empty object.
        let queried = try await session("queried")
        #expect(try await put(queried, "bytes */*", []).status == 200)
        #expect(try await backend.metadata(of: ObjectPath(bucket: bucket, name: "queried")).size == 0)
        // 4. …and the finished session is gone.
        #expect(try await put(queried, "bytes */*", []).status == 404)
        // 2. A chunk claiming offset 1000 on an empty session is stored at 0.
        let misplaced = try await session("misplaced")
        let answer = try await put(misplaced, "bytes 1000-1999/*", testBytes(1000, seed: 1))
        #expect(answer.status == 308)
        #expect(answer.headers.first(ignoringCase: "range") == "bytes=0-1999")
        _ = try await put(misplaced, "bytes */1000", [])
        #expect(try await backend.metadata(of: ObjectPath(bucket: bucket, name: "misplaced")).size == 1000)
        // 3. DELETE answers 499, and the session still commits afterwards.
        let deleted = try await session("deleted")
        let cancel = try await client.fetch(UpstreamRequest(method: "DELETE", url: deleted), maxBytes: 1 << 20)
        #expect(cancel.status == 499)
        #expect(try await put(deleted, "bytes 0-9/10", testBytes(10, seed: 2)).status == 200)
    }

    func expectAbsent(_ backend: GCSBackend, _ object: ObjectPath, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        do {
            _ = try await backend.metadata(of: object)
            Issue.record("\(object.name) must not exist yet", sourceLocation: sourceLocation)
        } catch {
            #expect(error.isNotFound, sourceLocation: sourceLocation)
        }
    }
}

/// The resumable MD5/CRC32C the upload record carries, against `Crypto` (OpenSSL MD5, SSE4.2 CRC32C).
@Suite struct GCSRunningChecksumTests {
    @Test func rfc1321Vectors() {
        for (text, hex) in [
            ("", "d41d8cd98f00b204e9800998ecf8427e"), ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a"
            ),
        ] {
            var md5 = ResumableMD5()
            md5.update(Array(text.utf8))
            #expect(md5.finalized().map { String(format: "%02x", $0) }.joined() == hex)
        }
    }

    /// Any split of the bytes, with the state saved and restored between pieces, gives Crypto's digests.
    @Test func resumedAcrossPiecesMatchesCrypto() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<40 {
            let body = testBytes(Int.random(in: 0...300_000, using: &generator), seed: UInt64(round + 1))
            var checksum = GCSRunningChecksum()
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + Int.random(in: 1...70_000, using: &generator))
                checksum.update(Array(body[offset..<end]))
                checksum = try #require(GCSRunningChecksum(encoded: checksum.encoded))
                offset = end
            }
            var reference = BodyChecksum()
            reference.update(body)
            let expected = reference.finish()
            #expect(checksum.digests.md5 == expected.md5Base64)
            #expect(checksum.digests.crc32c == expected.crc32cBase64)
            #expect(checksum.byteCount == Int64(body.count))
        }
        #expect(GCSRunningChecksum(encoded: "zz-AAAA") == nil)
        #expect(ResumableMD5(state: [UInt8](repeating: 0, count: 25)) == nil, "buffered bytes must match the length")
    }
}
