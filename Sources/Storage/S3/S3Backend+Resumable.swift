import Crypto
public import PortcullisCore
import Synchronization
import Upstream

/// Resumable uploads on S3, stateless: everything an instance needs to continue an upload is in the bucket,
/// under `.portcullis-staging/r/<id>/` (hidden from the v0 API), and one listing of that folder tells it all.
///
/// Design, and why not "chunks = multipart parts": S3 parts must be ≥ 5 MiB except the last, while clients
/// send chunks of any multiple of 256 KiB (the Firebase JS SDK starts at 256 KiB and doubles), and — the
/// deciding point — `md5Hash`/`crc32c` of the whole body must be known (and judged by `beforeCommit`) before
/// the object appears, but the bytes of uploaded parts cannot be read back before CompleteMultipartUpload, and
/// an MD5 state cannot be carried across stateless requests. So every chunk is stored whole as one staging
/// object, and finalize reads them back: up to one part, through `write` (one PutObject); above, in two passes
/// (`assemble`): checksums first, then a multipart upload at the key carrying the final metadata whose parts
/// are server-side copies of the staged chunks (UploadPartCopy) where they are ≥ 5 MiB. Correct for any chunk
/// sizes, bounded memory (one part), at the price of reading the staged bytes once more at finalize.
///
/// Keys under the upload's folder (their names carry the state, so a listing suffices):
/// - `a-<object hash>-<declared size | u>`: written by `startUpload`; binds the handle to its object;
/// - `c-<offset, 20 digits>`: one chunk, stored by a single PutObject (whole or not at all);
/// - `x-cancelled`: the upload was cancelled (its chunks are deleted);
/// - `z-<size>-<generation>`: finalized as that generation (its chunks are deleted).
/// The handle is the upload id (32 hex digits). Abandoned uploads stay until an S3 lifecycle rule on
/// `.portcullis-staging/` expires them (recommended: a few days, longer than the gateway's upload URL lifetime).
extension S3Backend: ResumableStaging {
    public func startUpload(
        _ object: ObjectPath, attributes: ObjectAttributes,
        declaredSize: Int64?
    ) async throws(StorageError) -> String {
        let id = Self.randomID()
        let marker = "a-" + Self.objectHash(object) + "-" + (declaredSize.map(String.init) ?? "u")
        _ = try await exchange(
            "PUT", url(Self.uploadFolder(id) + marker), body: [], op: "upload_start",
            idempotent: true)
        return id
    }

    public func appendChunk(
        _ handle: String, object: ObjectPath, offset: Int64,
        body: any ByteStream
    ) async throws(StorageError) -> Int64 {
        let upload: StagedUpload
        do { upload = try await load(handle, object: object) } catch { body.cancel(); throw error }
        guard case .active = upload.phase else {
            body.cancel(); throw .invalidArgument("the upload is no longer active")
        }
        guard offset == upload.staged else { body.cancel(); throw .offsetMismatch(current: upload.staged) }
        let room = upload.declared.map { $0 - offset }
        let key = Self.uploadFolder(handle) + Self.chunkName(offset)
        if let length = body.expectedLength {
            if let room, length > room {
                body.cancel(); throw .sizeMismatch(expected: upload.declared!, actual: offset + length)
            }
            guard length > 0 else { return offset }
            // Streamed with its known length: a body that breaks off aborts the PUT, so nothing is stored.
            try await storeChunk(key, body: .stream(body, length: length), handle: handle, object: object)
            return offset + length
        }
        // Unknown length (chunked request): buffered, up to one part.
        var bytes = [UInt8]()
        while true {
            let chunk: [UInt8]?
            do { chunk = try await body.next(maxLength: 64 * 1024) } catch { throw .bodyFailed(error) }
            guard let chunk else { break }
            if let room, Int64(bytes.count + chunk.count) > room {
                body.cancel()
                throw .sizeMismatch(expected: upload.declared!, actual: offset + Int64(bytes.count + chunk.count))
            }
            guard bytes.count + chunk.count <= configuration.partBytes else {
                body.cancel()
                throw .bodyFailed(ByteStreamError.limitExceeded(limit: Int64(configuration.partBytes)))
            }
            bytes.append(contentsOf: chunk)
        }
        guard !bytes.isEmpty else { return offset }
        try await storeChunk(key, body: .bytes(bytes), handle: handle, object: object)
        return offset + Int64(bytes.count)
    }

    /// PUTs a chunk with `If-None-Match: *`, so of two racing requests for one offset (a client retry and its
    /// original) only the first is stored; the loser learns the new staged size as an offset mismatch.
    func storeChunk(
        _ key: String, body: UpstreamRequestBody, handle: String,
        object: ObjectPath
    ) async throws(StorageError) {
        let response = try await send(
            "PUT", url(key),
            headers: [
                ("Content-Type", "application/octet-stream"),
                ("If-None-Match", "*"),
            ],
            body: body, op: "upload_chunk", idempotent: false)
        let answer = (try? await response.body.collect(limit: 64 * 1024)) ?? []
        guard (200..<300).contains(response.status) else {
            if response.status == 412 || response.status == 409 {
                throw .offsetMismatch(current: try await load(handle, object: object).staged)
            }
            throw Self.map(status: response.status, headers: response.headers, body: answer)
        }
    }

    public func stagedSize(_ handle: String, object: ObjectPath) async throws(StorageError) -> Int64 {
        let upload = try await load(handle, object: object)
        switch upload.phase {
        case .active: return upload.staged
        case .finalized(let size, _): return size
        case .cancelled: throw .invalidArgument("the upload was cancelled")
        }
    }

    public func uploadState(_ handle: String, object: ObjectPath) async throws(StorageError) -> UploadState {
        let upload = try await load(handle, object: object)
        switch upload.phase {
        case .active: return .active(stagedSize: upload.staged)
        case .finalized(let size, let generation): return .finalized(size: size, generation: generation)
        case .cancelled: return .cancelled
        }
    }

    public func finalizeUpload(
        _ handle: String, object: ObjectPath, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        let upload = try await load(handle, object: object)
        guard case .active = upload.phase else { throw .invalidArgument("the upload is no longer active") }
        if let declared = upload.declared, declared != upload.staged {
            throw .sizeMismatch(expected: declared, actual: upload.staged)
        }
        let folder = Self.uploadFolder(handle)
        let body = StagedChunksStream(
            backend: self, keys: upload.chunks.map { folder + $0.name },
            total: upload.staged)
        let metadata: ObjectMetadata
        if upload.staged <= Int64(configuration.partBytes) {
            metadata = try await write(object, body: body, attributes: attributes, options: options)
        } else {
            metadata = try await assemble(
                upload, folder: folder, object: object, attributes: attributes,
                options: options)
        }
        // Committed: record the outcome, then release the chunks (best effort; a lifecycle rule catches leftovers).
        await cleanUp { [self] () async throws(StorageError) in
            _ = try await exchange(
                "PUT", url(folder + "z-\(metadata.size)-\(metadata.generation)"), body: [],
                op: "upload_finalize", idempotent: true)
            for chunk in upload.chunks { try await deleteKey(folder + chunk.name) }
        }
        return metadata
    }

    public func cancelUpload(_ handle: String, object: ObjectPath) async throws(StorageError) {
        let upload = try await load(handle, object: object)
        guard case .active = upload.phase else { return }
        let folder = Self.uploadFolder(handle)
        _ = try await exchange("PUT", url(folder + "x-cancelled"), body: [], op: "upload_cancel", idempotent: true)
        for chunk in upload.chunks { try await deleteKey(folder + chunk.name) }
    }

    /// Commits a staged upload larger than one part in two passes. First every staged byte is read back once
    /// for MD5/CRC32C, so the checks and `beforeCommit` run and the complete metadata is known; then a multipart
    /// upload at the object's key (created with that metadata, so no copy follows) is assembled from the chunks:
    /// runs of `minimumPart` or more bytes are copied server-side (UploadPartCopy with a source range), shorter
    /// runs are read back into one buffered part of up to `partBytes`. Every part but the last is ≥ 5 MiB, as
    /// S3 requires. Any failure aborts the multipart upload and leaves the chunks, so finalize may be retried.
    func assemble(
        _ upload: StagedUpload, folder: String, object: ObjectPath, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        var checksum = BodyChecksum()
        let stream = StagedChunksStream(
            backend: self, keys: upload.chunks.map { folder + $0.name }, total: upload.staged)
        while true {
            let bytes: [UInt8]?
            do { bytes = try await stream.next(maxLength: 256 * 1024) } catch let error as StorageError {
                throw error
            } catch {
                throw .unavailable(reason: "S3 staged chunk broke off: \(error)", retryAfter: 1)
            }
            guard let bytes else { break }
            checksum.update(bytes)
        }
        let sums = checksum.finish()
        guard sums.size == upload.staged else { throw .internalError("staged chunks changed during finalize") }
        let metadata = try await prepare(object, sums: sums, attributes: attributes, options: options, current: nil)
        let uploadID = try await createMultipartUpload(object.name, headers: headers(for: metadata))
        do throws(StorageError) {
            var etags = [String]()
            var buffer = [UInt8]()
            let minimumPart = Int64(Self.minimumPartBytes)
            let maximumCopy: Int64 = 5 << 30
            for chunk in upload.chunks {
                let source = folder + chunk.name
                var position: Int64 = 0
                while position < chunk.size {
                    let rest = chunk.size - position
                    if buffer.isEmpty && rest >= minimumPart {
                        var length = min(rest, maximumCopy)
                        if rest - length > 0 && rest - length < minimumPart { length = rest - minimumPart }
                        etags.append(
                            try await copyPart(
                                object.name, uploadID: uploadID, number: etags.count + 1,
                                source: source, offset: position, length: length))
                        position += length
                    } else {
                        let take = min(rest, Int64(configuration.partBytes - buffer.count))
                        buffer += try await readRange(source, offset: position, length: take)
                        position += take
                        if buffer.count >= configuration.partBytes {
                            etags.append(
                                try await uploadPart(
                                    object.name, uploadID: uploadID, number: etags.count + 1,
                                    bytes: buffer))
                            buffer = []
                        }
                    }
                }
            }
            if !buffer.isEmpty || etags.isEmpty {
                etags.append(
                    try await uploadPart(object.name, uploadID: uploadID, number: etags.count + 1, bytes: buffer))
            }
            try await completeMultipartUpload(object.name, uploadID: uploadID, etags: etags)
        } catch {
            await cleanUp { [self] () async throws(StorageError) in
                try await abortMultipartUpload(object.name, uploadID: uploadID)
            }
            throw error
        }
        return metadata
    }

    /// S3's smallest part (all but the last).
    static let minimumPartBytes = 5 * 1024 * 1024

    func copyPart(
        _ key: String, uploadID: String, number: Int, source: String, offset: Int64,
        length: Int64
    ) async throws(StorageError) -> String {
        let headers = [
            ("x-amz-copy-source", configuration.bucket + "/" + PercentEncoding.unreservedAndSlash.encode(source)),
            ("x-amz-copy-source-range", "bytes=\(offset)-\(offset + length - 1)"),
        ]
        let (_, body) = try await exchange(
            "PUT", url(key, query: [("partNumber", String(number)), ("uploadId", uploadID)]), headers: headers,
            op: "copy_part", idempotent: true)
        guard let etag = try Self.checkResult(body).resultETag else {
            throw .internalError("S3 UploadPartCopy answered without an ETag")
        }
        return etag
    }

    /// `length` (≤ one part) bytes of `key` from `offset`.
    func readRange(_ key: String, offset: Int64, length: Int64) async throws(StorageError) -> [UInt8] {
        let (_, bytes) = try await exchange(
            "GET", url(key), headers: [("Range", "bytes=\(offset)-\(offset + length - 1)")],
            op: "upload_read", idempotent: true)
        guard Int64(bytes.count) == length else {
            throw .internalError("S3 returned \(bytes.count) of \(length) staged bytes")
        }
        return bytes
    }

    // MARK: state

    enum UploadPhase {
        case active
        case finalized(size: Int64, generation: Int64)
        case cancelled
    }

    struct StagedUpload {
        var declared: Int64?
        var phase: UploadPhase
        /// The contiguous chunks from offset 0, in order.
        var chunks: [(name: String, size: Int64)]
        var staged: Int64
    }

    static func uploadFolder(_ id: String) -> String { stagingPrefix + "r/" + id + "/" }

    static func chunkName(_ offset: Int64) -> String {
        let digits = String(offset)
        return "c-" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    static func objectHash(_ object: ObjectPath) -> String {
        String(HexText.encode(SHA256.hash(Array("\(object.bucket)\n\(object.name)".utf8))).prefix(32))
    }

    /// Reads the upload's folder. `.notFound` for a malformed or unknown handle, or one of another object.
    func load(_ handle: String, object: ObjectPath) async throws(StorageError) -> StagedUpload {
        guard handle.utf8.count == 32, handle.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else {
            throw .notFound
        }
        let folder = Self.uploadFolder(handle)
        var entries = [(name: String, size: Int64)]()
        var after: String?
        while true {
            var query = [("encoding-type", "url"), ("list-type", "2"), ("max-keys", "1000"), ("prefix", folder)]
            if let after { query.append(("start-after", after)) }
            let page = try await listObjects(query, op: "upload_state")
            for (key, size) in page.keys where key.bytesHasPrefix(folder) {
                entries.append((String(decoding: key.utf8.dropFirst(folder.utf8.count), as: UTF8.self), size))
            }
            guard page.isTruncated, let last = page.keys.last?.name else { break }
            after = last  // not the continuation token: see S3Backend+List
        }
        let expected = "a-" + Self.objectHash(object) + "-"
        guard let marker = entries.first(where: { $0.name.bytesHasPrefix("a-") }), marker.name.bytesHasPrefix(expected)
        else { throw .notFound }
        let declaredText = String(decoding: marker.name.utf8.dropFirst(expected.utf8.count), as: UTF8.self)
        var upload = StagedUpload(declared: Int64(declaredText), phase: .active, chunks: [], staged: 0)
        for entry in entries {
            if entry.name == "x-cancelled" {
                upload.phase = .cancelled
            } else if let finalized = entry.name.bytesRemovingPrefix("z-") {
                let parts = finalized.bytesSplit(separator: UInt8(ascii: "-"))
                if parts.count == 2, let size = Int64(parts[0]), let generation = Int64(parts[1]) {
                    upload.phase = .finalized(size: size, generation: generation)
                }
            } else if entry.name.bytesHasPrefix("c-"), let offset = Int64(entry.name.dropFirst(2)),
                offset == upload.staged,
                entry.size > 0
            {
                // Listing order is offset order (fixed-width names); a gap ends the contiguous bytes.
                upload.chunks.append(entry)
                upload.staged += entry.size
            }
        }
        return upload
    }
}

/// The staged chunks of an upload read back in order, one GET at a time, as one body for `write`.
final class StagedChunksStream: ByteStream {
    private struct State {
        var index = 0
        var current: (any ByteStream)?
        var cancelled = false
    }

    private let backend: S3Backend
    private let keys: [String]
    private let total: Int64
    private let state = Mutex(State())

    init(backend: S3Backend, keys: [String], total: Int64) {
        self.backend = backend
        self.keys = keys
        self.total = total
    }

    var expectedLength: Int64? { total }

    func next(maxLength: Int) async throws -> [UInt8]? {
        while true {
            let (current, index, cancelled) = state.withLock { ($0.current, $0.index, $0.cancelled) }
            if cancelled { throw ByteStreamError.cancelled }
            if let current {
                if let chunk = try await current.next(maxLength: maxLength) { return chunk }
                state.withLock {
                    $0.current = nil; $0.index += 1
                }
                continue
            }
            guard index < keys.count else { return nil }
            let response = try await backend.send("GET", backend.url(keys[index]), op: "upload_read", idempotent: true)
            guard response.status == 200 else {
                let bytes = (try? await response.body.collect(limit: 64 * 1024)) ?? []
                throw S3Backend.map(status: response.status, headers: response.headers, body: bytes)
            }
            let stillWanted = state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.current = response.body
                return true
            }
            if !stillWanted { response.body.cancel(); throw ByteStreamError.cancelled }
        }
    }

    func cancel() {
        let current = state.withLock { state -> (any ByteStream)? in
            state.cancelled = true
            return state.current
        }
        current?.cancel()
    }
}
