import PortcullisCore
import Upstream

/// GCS resumable sessions: the transport of every write (and of our resumable protocol).
extension GCSBackend {
    /// Outcome of one chunk PUT.
    enum ChunkResult {
        case incomplete(persisted: Int64)
        case done(JSONValue)
    }

    /// Opens a session; the session URI is the handle.
    /// `declaredSize` set → GCS itself refuses to commit any other total (`X-Upload-Content-Length`).
    func startSession(
        _ object: ObjectPath, attributes: ObjectAttributes, preconditions: Preconditions,
        declaredSize: Int64? = nil
    ) async throws(StorageError) -> String {
        var query = [("uploadType", "resumable"), ("name", object.name)]
        query += Self.preconditionQuery(preconditions)
        var headers = [(String, String)]()
        if let type = attributes.contentType { headers.append(("X-Upload-Content-Type", type)) }
        if let declaredSize { headers.append(("X-Upload-Content-Length", String(declaredSize))) }
        let (_, responseHeaders, _) = try await sendJSON(
            "POST", url("\(configuration.endpoint)/upload/storage/v1\(bucketPath)/o", query),
            json: GCSObjectCoding.resource(attributes, name: object.name), headers: headers, op: "upload_start",
            idempotent: false)
        guard let location = responseHeaders.first(ignoringCase: "location"), !location.isEmpty else {
            throw .internalError("GCS opened no upload session")
        }
        return location
    }

    /// Sends `bytes` at `offset`; `total` set → this is the final chunk.
    func putChunk(
        _ session: String, bytes: [UInt8], offset: Int64, total: Int64?,
        contentType: String?
    ) async throws(StorageError) -> ChunkResult {
        let range: String
        if bytes.isEmpty {
            range = "bytes */\(total.map(String.init) ?? "*")"
        } else {
            range = "bytes \(offset)-\(offset + Int64(bytes.count) - 1)/\(total.map(String.init) ?? "*")"
        }
        // GCS takes the type from the session; emulators from the chunk, so send it on both.
        let headers = [("Content-Range", range), ("Content-Type", contentType ?? "application/octet-stream")]
        let (status, responseHeaders, json) = try await sendJSON(
            "PUT", session, json: nil, headers: headers,
            op: "upload_chunk", idempotent: false,
            rawBody: bytes)
        if status == 308 { return .incomplete(persisted: Self.persisted(responseHeaders)) }
        guard let json else { throw .internalError("GCS finished the upload without an object resource") }
        return .done(json)
    }

    func cancelSession(_ session: String) async {
        _ = try? await sendJSON("DELETE", session, op: "upload_cancel", idempotent: true)
    }

    static func persisted(_ headers: [(String, String)]) -> Int64 {
        guard let range = headers.first(ignoringCase: "range"),
            let last = range.bytesCut(at: UInt8(ascii: "-"), last: true).flatMap({ Int64($0.after) })
        else { return 0 }
        return last + 1
    }

    /// Streams `body` into `session` in chunks, holding the last one until the checks and `beforeCommit` pass.
    func upload(
        _ body: any ByteStream, to session: String, object: ObjectPath, attributes: ObjectAttributes,
        options: WriteOptions, startOffset: Int64 = 0
    ) async throws(StorageError) -> ObjectMetadata {
        let chunkSize = configuration.uploadChunkBytes
        var checksum = BodyChecksum()
        var pending = [UInt8]()
        pending.reserveCapacity(chunkSize + 64 * 1024)
        var offset = startOffset
        while true {
            let chunk: [UInt8]?
            do { chunk = try await body.next(maxLength: 64 * 1024) } catch { throw .bodyFailed(error) }
            guard let chunk else { break }
            checksum.update(chunk)
            pending.append(contentsOf: chunk)
            while pending.count > chunkSize {
                let part = Array(pending[..<chunkSize])
                guard
                    case .incomplete(let persisted) = try await putChunk(
                        session, bytes: part, offset: offset,
                        total: nil, contentType: attributes.contentType),
                    persisted == offset + Int64(chunkSize)
                else {
                    throw .internalError("GCS session lost bytes")
                }
                offset += Int64(chunkSize)
                pending.removeFirst(chunkSize)
            }
        }
        let sums = checksum.finish()
        try options.verify(size: sums.size, md5Base64: sums.md5Base64, crc32cBase64: sums.crc32cBase64)
        if let beforeCommit = options.beforeCommit {
            let now = Timestamp.now()
            let preview = ObjectMetadata(
                bucket: object.bucket, name: object.name, generation: now.nanosecondsSinceEpoch / 1000,
                size: sums.size, timeCreated: now, updated: now, md5Hash: sums.md5Base64, crc32c: sums.crc32cBase64,
                storageClass: attributes.storageClass ?? "STANDARD", contentType: attributes.contentType,
                contentEncoding: attributes.contentEncoding,
                contentDisposition: attributes.contentDisposition, contentLanguage: attributes.contentLanguage,
                cacheControl: attributes.cacheControl, customMetadata: attributes.customMetadata,
                downloadTokens: attributes.downloadTokens, customTime: attributes.customTime)
            do { try await beforeCommit(preview) } catch { throw .rejected(error) }
        }
        // After `beforeCommit`: a caller it refuses never learns whether the preconditions held.
        try await checkPreconditions(object, options.preconditions)
        let total = offset + Int64(pending.count)
        guard
            case .done(let json) = try await putChunk(
                session, bytes: pending, offset: offset, total: total,
                contentType: attributes.contentType)
        else {
            throw .internalError("GCS did not commit the final chunk")
        }
        return try GCSObjectCoding.metadata(from: json, bucket: object.bucket)
    }
}
