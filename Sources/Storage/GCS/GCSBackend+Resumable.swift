public import PortcullisCore
import Upstream

/// Our resumable protocol on a GCS resumable session: `startUpload` opens the session (object
/// resource with the Firebase field mapping and download tokens, as for every write) and the handle carries its
/// URI; chunks are PUT to the session as `bytes X-Y/*` in 256 KiB-aligned pieces (GCS's rule for non-final
/// requests), streamed from the client's body; the unaligned tail waits in the upload's record
/// (`GCSUploadRecord`) until the next chunk or `finalize`, which sends it as the final request
/// `bytes X-Y/TOTAL` after the size checks, the preconditions and `beforeCommit`.
///
/// The record also carries the running MD5/CRC32C of the staged bytes (`GCSRunningChecksum`): `finalize`
/// checks a declared MD5 before anything is committed (the upload stays active), gives `beforeCommit` the true
/// hashes, and asks GCS to verify them (`X-Goog-Hash` on the final request) — end-to-end integrity.
///
/// Not serialized across instances: two appends racing for the same offset (which the protocol's clients do
/// not send) are not detected as such on GCS; the hash check at finalize refuses the result.
extension GCSBackend: ResumableStaging {
    static let granularity: Int64 = 256 * 1024

    /// URIs a session may have: the configured endpoint's upload path for this bucket.
    var sessionPrefix: String { "\(configuration.endpoint)/upload/storage/v1\(bucketPath)/o?" }

    public func startUpload(
        _ object: ObjectPath, attributes: ObjectAttributes,
        declaredSize: Int64?
    ) async throws(StorageError) -> String {
        if let declaredSize, declaredSize < 0 { throw .invalidArgument("negative upload size") }
        try Self.checkWritable(object.name)
        let session = try await startSession(
            object, attributes: attributes, preconditions: .none,
            declaredSize: declaredSize)
        guard GCSUploadHandle.isSession(session, prefix: sessionPrefix) else {
            throw .internalError("GCS answered with an upload session outside the configured endpoint")
        }
        let handle = GCSUploadHandle(declaredSize: declaredSize, object: object, session: session)
        do {
            try await writeRecord(
                .active(base: 0, tail: [], checksum: GCSRunningChecksum()), session: session,
                object: object)
        } catch {
            await cancelSession(session)
            throw error
        }
        return handle.encoded
    }

    public func appendChunk(
        _ handle: String, object: ObjectPath, offset: Int64,
        body: any ByteStream
    ) async throws(StorageError) -> Int64 {
        let upload = try parse(handle, object)
        let record = try await activeRecord(upload, object)
        let staged = record.base + Int64(record.tail.count)
        guard offset == staged else { throw .offsetMismatch(current: staged) }
        guard let length = body.expectedLength else {
            return try await appendSpooled(upload, object: object, record: record, body: body)
        }
        return try await appendKnown(upload, object: object, record: record, body: body, length: length)
    }

    public func stagedSize(_ handle: String, object: ObjectPath) async throws(StorageError) -> Int64 {
        try await uploadState(handle, object: object).stagedSize()
    }

    public func uploadState(_ handle: String, object: ObjectPath) async throws(StorageError) -> UploadState {
        let upload = try parse(handle, object)
        switch try await readRecord(upload.session, object: object) {
        case .active(let base, let tail, _)?: return .active(stagedSize: base + Int64(tail.count))
        case .final(let size, let generation)?: return .finalized(size: size, generation: generation)
        case .cancelled?: return .cancelled
        case nil: throw .notFound
        }
    }

    public func finalizeUpload(
        _ handle: String, object: ObjectPath, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        let upload = try parse(handle, object)
        let (base, tail, checksum) = try await activeRecord(upload, object)
        let total = base + Int64(tail.count)
        if let declared = upload.declaredSize, declared != total {
            throw .sizeMismatch(expected: declared, actual: total)
        }
        let (md5, crc32c) = checksum.digests
        try options.verify(size: total, md5Base64: md5, crc32cBase64: crc32c)
        if let beforeCommit = options.beforeCommit {
            let now = Timestamp.now()
            let preview = ObjectMetadata(
                bucket: object.bucket, name: object.name, generation: now.nanosecondsSinceEpoch / 1000, size: total,
                timeCreated: now, updated: now, md5Hash: md5, crc32c: crc32c,
                storageClass: attributes.storageClass ?? "STANDARD", contentType: attributes.contentType,
                contentEncoding: attributes.contentEncoding, contentDisposition: attributes.contentDisposition,
                contentLanguage: attributes.contentLanguage, cacheControl: attributes.cacheControl,
                customMetadata: attributes.customMetadata, downloadTokens: attributes.downloadTokens,
                customTime: attributes.customTime)
            do { try await beforeCommit(preview) } catch { throw .rejected(error) }
        }
        // After `beforeCommit`: a caller it refuses never learns whether the preconditions held.
        try await checkPreconditions(object, options.preconditions)
        let range = tail.isEmpty ? "bytes */\(total)" : "bytes \(base)-\(total - 1)/\(total)"
        let headers = [
            ("Content-Range", range), ("Content-Type", attributes.contentType ?? "application/octet-stream"),
            ("X-Goog-Hash", "crc32c=\(crc32c),md5=\(md5)"),
        ]
        let status: Int, json: JSONValue?
        do {
            (status, _, json) = try await sendJSON(
                "PUT", upload.session, headers: headers, op: "upload_finalize",
                idempotent: false, rawBody: tail)
        } catch .invalidArgument(let why) {
            // GCS refuses a commit whose bytes do not match `X-Goog-Hash`: what it holds is not what we staged.
            await abandon(upload, object)
            throw .internalError("GCS refused the staged bytes: \(why)")
        } catch .notFound {
            throw await sessionGone(upload, object)
        }
        guard status != 308, let json else { throw .internalError("GCS did not commit the upload (\(status))") }
        let metadata = try GCSObjectCoding.metadata(from: json, bucket: object.bucket)
        if metadata.size != total || (metadata.md5Hash != nil && metadata.md5Hash != md5) {
            // Emulators ignore X-Goog-Hash: take the generation back; this upload is over.
            _ = try? await sendJSON(
                "DELETE",
                objectURL(
                    object.name,
                    query: [
                        ("generation", String(metadata.generation)),
                        ("ifGenerationMatch", String(metadata.generation)),
                    ]),
                op: "delete", idempotent: true)
            await abandon(upload, object)
            throw .internalError(
                "GCS committed other bytes than were staged (\(metadata.size) bytes, MD5 \(metadata.md5Hash ?? "-"))")
        }
        // The object is committed; a lost record only makes a later query fall back to the object itself.
        try? await writeRecord(
            .final(size: metadata.size, generation: metadata.generation), session: upload.session,
            object: object)
        return metadata
    }

    public func cancelUpload(_ handle: String, object: ObjectPath) async throws(StorageError) {
        let upload = try parse(handle, object)
        switch try await readRecord(upload.session, object: object) {
        case nil: throw .notFound
        case .cancelled?, .final?: return
        case .active?:
            await cancelSession(upload.session)  // GCS answers 499
            try await writeRecord(.cancelled, session: upload.session, object: object)
        }
    }

    // MARK: - Chunks

    /// A chunk of known length: its aligned part streams to the session in one PUT (with the old tail in
    /// front); the rest becomes the new tail.
    private func appendKnown(
        _ upload: GCSUploadHandle, object: ObjectPath, record: ActiveRecord,
        body: any ByteStream, length: Int64
    ) async throws(StorageError) -> Int64 {
        let (base, tail, checksum) = record
        let staged = base + Int64(tail.count)
        if let declared = upload.declaredSize, staged + length > declared {
            throw .sizeMismatch(expected: declared, actual: staged + length)
        }
        let combined = Int64(tail.count) + length
        let aligned = combined / Self.granularity * Self.granularity
        guard aligned > 0 else {
            // Under 256 KiB in all: nothing for GCS yet, the whole chunk joins the tail.
            let bytes: [UInt8]
            do { bytes = try await body.collect(limit: Int(length)) } catch { throw .bodyFailed(error) }
            guard bytes.count == Int(length) else {
                throw .bodyFailed(ByteStreamError.truncated(expected: length, received: Int64(bytes.count)))
            }
            var next = checksum
            next.update(bytes)
            try await writeRecord(
                .active(base: base, tail: tail + bytes, checksum: next), session: upload.session,
                object: object)
            return staged + length
        }
        let stream = GCSChunkStream(
            prefix: tail, body: body, forward: aligned - Int64(tail.count),
            restCount: Int(combined - aligned), checksum: checksum)
        let response = try await send(
            "PUT", upload.session,
            headers: [("Content-Range", "bytes \(base)-\(base + aligned - 1)/*")],
            body: .stream(stream, length: aligned), op: "upload_chunk", idempotent: false)
        let answer: [UInt8]
        do { answer = try await response.body.collect(limit: 1 << 20) } catch {
            throw .unavailable(reason: "GCS answer broke off: \(error)", retryAfter: 1)
        }
        guard response.status == 308 else {
            if response.status == 404 || response.status == 410 { throw await sessionGone(upload, object) }
            if (200..<300).contains(response.status) {
                throw .internalError("GCS committed the upload on a non-final chunk")
            }
            throw Self.map(status: response.status, headers: response.headers, body: answer)
        }
        let persisted = Self.persisted(response.headers)
        guard persisted == base + aligned else {
            // GCS kept another amount than it was sent whole; the staged bytes and their hashes no longer
            // match, so the upload ends here rather than commit something else.
            await abandon(upload, object)
            throw .internalError("GCS persisted \(persisted) bytes of an upload where \(base + aligned) were sent")
        }
        try await writeRecord(
            .active(base: base + aligned, tail: stream.rest, checksum: stream.checksum),
            session: upload.session, object: object)
        return staged + length
    }

    /// A chunk without a declared length (chunked transfer): spooled whole into a temporary object first (an
    /// atomic write, so a body failing midway stores nothing), then appended from there with its now-known
    /// length. Costs a second transfer, only for such chunks.
    private func appendSpooled(
        _ upload: GCSUploadHandle, object: ObjectPath, record: ActiveRecord,
        body: any ByteStream
    ) async throws(StorageError) -> Int64 {
        let spool: ObjectPath
        do {
            spool = try ObjectPath(
                bucket: object.bucket,
                reservedName: GCSUploadRecord.objectName(session: upload.session) + ".chunk")
        } catch { throw .internalError("spool name: \(error)") }
        let written = try await writeObject(spool, body: body, attributes: ObjectAttributes(), options: WriteOptions())
        do throws(StorageError) {
            let read = try await readObject(spool, range: nil)
            guard case .stream(let stream) = read.body else {
                throw StorageError.internalError("GCS read without a stream")
            }
            let size = try await appendKnown(upload, object: object, record: record, body: stream, length: written.size)
            try? await deleteObject(spool, preconditions: .none)
            return size
        } catch {
            try? await deleteObject(spool, preconditions: .none)
            throw error
        }
    }

    /// Ends an upload that can no longer succeed: the session is cancelled and the record says so.
    private func abandon(_ upload: GCSUploadHandle, _ object: ObjectPath) async {
        await cancelSession(upload.session)
        try? await writeRecord(.cancelled, session: upload.session, object: object)
    }

    // MARK: - Handles and records

    private func parse(_ handle: String, _ object: ObjectPath) throws(StorageError) -> GCSUploadHandle {
        guard let upload = GCSUploadHandle(parsing: handle, object: object, sessionPrefix: sessionPrefix) else {
            throw .notFound
        }
        return upload
    }

    typealias ActiveRecord = (base: Int64, tail: [UInt8], checksum: GCSRunningChecksum)

    private func activeRecord(_ upload: GCSUploadHandle, _ object: ObjectPath) async throws(StorageError)
        -> ActiveRecord
    {
        switch try await readRecord(upload.session, object: object) {
        case .active(let base, let tail, let checksum)?: return (base, tail, checksum)
        case .final?: throw .invalidArgument("The upload was already finalized.")
        case .cancelled?: throw .invalidArgument("The upload was cancelled.")
        case nil: throw .notFound
        }
    }

    /// The upload's record; nil when there is none (unknown or expired upload).
    func readRecord(_ session: String, object: ObjectPath) async throws(StorageError) -> GCSUploadRecord? {
        let response = try await send(
            "GET",
            objectURL(
                GCSUploadRecord.objectName(session: session),
                query: [("alt", "media")]), op: "upload_record")
        let bytes: [UInt8]
        do { bytes = try await response.body.collect(limit: Int(Self.granularity) + 1024) } catch {
            throw .unavailable(reason: "GCS answer broke off: \(error)", retryAfter: 1)
        }
        if response.status == 404 { return nil }
        guard response.status == 200 else {
            throw Self.map(status: response.status, headers: response.headers, body: bytes)
        }
        guard let record = GCSUploadRecord(decoding: bytes) else { throw .internalError("unreadable upload record") }
        return record
    }

    /// GCS no longer knows the session (expired after a week, or ended elsewhere): the upload's record goes
    /// too, so the upload is unknown from now on (`.notFound`, which the Gateway answers as "expired").
    private func sessionGone(_ upload: GCSUploadHandle, _ object: ObjectPath) async -> StorageError {
        _ = try? await sendJSON(
            "DELETE", objectURL(GCSUploadRecord.objectName(session: upload.session)),
            op: "upload_record", idempotent: true)
        return .notFound
    }

    /// Replaces the upload's record (one media upload: atomic on GCS).
    func writeRecord(_ record: GCSUploadRecord, session: String, object: ObjectPath) async throws(StorageError) {
        let query = [("uploadType", "media"), ("name", GCSUploadRecord.objectName(session: session))]
        _ = try await sendJSON(
            "POST", url("\(configuration.endpoint)/upload/storage/v1\(bucketPath)/o", query),
            headers: [("Content-Type", "application/octet-stream")], op: "upload_record",
            idempotent: true, rawBody: record.encoded)
    }
}
