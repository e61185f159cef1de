import PortcullisCore
import Storage
import Testing

/// Contract checks for `ResumableStaging`.
extension BackendContract {
    // MARK: - Resumable

    func requireStaging() throws -> any ResumableStaging {
        try #require(staging, "this backend does not offer resumable staging")
    }

    func resumableLifecycle() async throws {
        let staging = try requireStaging()
        let body = testBytes(600_000, seed: 9)
        let attributes = ObjectAttributes(
            contentType: "application/octet-stream", customMetadata: ["k": "v"],
            downloadTokens: ["r1"])
        let handle = try await staging.startUpload(
            path("big/file.bin"), attributes: attributes, declaredSize: Int64(body.count))
        #expect(try await staging.stagedSize(handle, object: path("big/file.bin")) == 0)
        #expect(try await staging.uploadState(handle, object: path("big/file.bin")) == .active(stagedSize: 0))
        var offset: Int64 = 0
        for chunk in [0..<262_144, 262_144..<524_288, 524_288..<600_000] {
            let size = try await staging.appendChunk(
                handle, object: path("big/file.bin"), offset: offset,
                body: BufferByteStream(Array(body[chunk])))
            offset += Int64(chunk.count)
            #expect(size == offset)
            #expect(try await staging.stagedSize(handle, object: path("big/file.bin")) == offset)
        }
        try await expectNotFound("big/file.bin")
        let metadata = try await staging.finalizeUpload(
            handle, object: path("big/file.bin"), attributes: attributes,
            options: WriteOptions(expectedMD5: md5Base64(body)))
        #expect(metadata.size == Int64(body.count))
        #expect(metadata.md5Hash == md5Base64(body))
        #expect(metadata.customMetadata == ["k": "v"])
        #expect(metadata.downloadTokens == ["r1"])
        #expect(try await get("big/file.bin").1 == body)
        if case .active = try await staging.uploadState(handle, object: path("big/file.bin")) {
            Issue.record("a finalized upload must not be active")
        }
        do {
            _ = try await staging.appendChunk(
                handle, object: path("big/file.bin"), offset: offset, body: BufferByteStream([1]))
            Issue.record("appending to a finalized upload must fail")
        } catch {}
        // The handle belongs to its object.
        let other = try await staging.startUpload(path("other"), attributes: ObjectAttributes(), declaredSize: nil)
        do {
            _ = try await staging.stagedSize(other, object: path("not-other"))
            Issue.record("a handle used for another object must be notFound")
        } catch {
            #expect(error.isNotFound)
        }
        do {
            _ = try await staging.stagedSize("0123456789abcdef0123456789abcdef", object: path("other"))
            Issue.record("an unknown handle must be notFound")
        } catch {
            #expect(error.isNotFound)
        }
        // An upload with no declared size and no bytes finalizes as an empty object.
        let empty = try await staging.finalizeUpload(
            other, object: path("other"), attributes: ObjectAttributes(),
            options: WriteOptions())
        #expect(empty.size == 0)
    }

    func resumableOffsetMismatch() async throws {
        let staging = try requireStaging()
        let object = try path("off")
        let handle = try await staging.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        _ = try await staging.appendChunk(
            handle, object: object, offset: 0, body: BufferByteStream(testBytes(1000, seed: 1)))
        for wrong in [Int64(0), 999, 1001, 5000] {
            do {
                _ = try await staging.appendChunk(
                    handle, object: object, offset: wrong, body: BufferByteStream([1, 2, 3]))
                Issue.record("offset \(wrong) must be refused")
            } catch {
                guard case .offsetMismatch(let current)? = asStorageError(error) else {
                    Issue.record("got \(error)"); continue
                }
                #expect(current == 1000)
            }
        }
        #expect(try await staging.stagedSize(handle, object: object) == 1000)
        // A chunk whose body fails midway is not stored at all.
        do {
            _ = try await staging.appendChunk(
                handle, object: object, offset: 1000,
                body: FailingByteStream(prefix: testBytes(2 << 20, seed: 2)))
            Issue.record("a failing chunk body must fail")
        } catch {}
        #expect(try await staging.stagedSize(handle, object: object) == 1000)
        _ = try await staging.appendChunk(
            handle, object: object, offset: 1000, body: BufferByteStream(testBytes(24, seed: 5)))
        let metadata = try await staging.finalizeUpload(
            handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
        #expect(metadata.size == 1024)
        #expect(try await get("off").1 == testBytes(1000, seed: 1) + testBytes(24, seed: 5))
    }

    func resumableCancel() async throws {
        let staging = try requireStaging()
        let object = try path("cancel")
        let handle = try await staging.startUpload(object, attributes: ObjectAttributes(), declaredSize: 10)
        _ = try await staging.appendChunk(
            handle, object: object, offset: 0, body: BufferByteStream(testBytes(5, seed: 1)))
        try await staging.cancelUpload(handle, object: object)
        try await staging.cancelUpload(handle, object: object)
        #expect(try await staging.uploadState(handle, object: object) == .cancelled)
        do {
            _ = try await staging.finalizeUpload(
                handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
            Issue.record("finalizing a cancelled upload must fail")
        } catch {}
        do {
            _ = try await staging.appendChunk(handle, object: object, offset: 5, body: BufferByteStream([1]))
            Issue.record("appending to a cancelled upload must fail")
        } catch {}
        try await expectNotFound("cancel")
    }

    func resumableSizeMismatch() async throws {
        let staging = try requireStaging()
        let object = try path("short")
        let handle = try await staging.startUpload(object, attributes: ObjectAttributes(), declaredSize: 100)
        _ = try await staging.appendChunk(
            handle, object: object, offset: 0, body: BufferByteStream(testBytes(60, seed: 1)))
        do {
            _ = try await staging.finalizeUpload(
                handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
            Issue.record("finalizing short of the declared size must fail")
        } catch {
            guard case .sizeMismatch(100, 60)? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        try await expectNotFound("short")
        do {
            _ = try await staging.appendChunk(
                handle, object: object, offset: 60, body: BufferByteStream(testBytes(50, seed: 2)))
            Issue.record("a chunk past the declared size must fail")
        } catch {
            guard case .sizeMismatch? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        #expect(try await staging.stagedSize(handle, object: object) == 60)
        // Still active: the upload can be completed after the failed attempts.
        _ = try await staging.appendChunk(
            handle, object: object, offset: 60, body: BufferByteStream(testBytes(40, seed: 2)))
        do {
            _ = try await staging.finalizeUpload(
                handle, object: object, attributes: ObjectAttributes(),
                options: WriteOptions(expectedMD5: "AAAAAAAAAAAAAAAAAAAAAA=="))
            Issue.record("a wrong MD5 at finalize must fail")
        } catch {}
        try await expectNotFound("short")
        let metadata = try await staging.finalizeUpload(
            handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
        #expect(metadata.size == 100)
    }
}
