import HTTPServer
import PortcullisCore
import Service
import Storage

/// GCS's resumable upload protocol over the service's resumable uploads. The session URI's `upload_id` is the
/// service's sealed ticket, so any instance continues a session, and chunks need no `Authorization`.
///
/// - start: `POST …/o?uploadType=resumable` (resource JSON; `X-Upload-Content-Type`/`-Length`) → 200 with
///   `Location: {session URI}` (under `/resumable/upload/…` when the start came there, as GCS answers);
/// - chunk: `PUT {session}` with `Content-Range: bytes FIRST-LAST/TOTAL|*` → 308 with `Range: bytes=0-N` while
///   the total is not reached, 200 with the object resource on the last one (a `PUT` without `Content-Range`
///   is the whole object);
/// - status: `PUT {session}`, empty body, `Content-Range: bytes */TOTAL|*` → 308 (+`Range` once bytes are
///   stored), or 200 with the resource when finished (`*/TOTAL` with every byte stored finalizes, which is
///   also how an empty object is uploaded);
/// - cancel: `DELETE {session}` → 499.
/// A chunk at the wrong offset stores nothing and is answered 308 with what is stored, so clients resync.
/// A request with `X-GUploader-No-308: yes` (Go's google-api-go-client sends it on every chunk) gets each 308
/// as GCS answers it: `200` with `X-HTTP-Status-Code-Override: 308` and the same `Range`.
extension JSONAPI {
    /// Longest session URI handed out: below the HTTP server's 8 KiB request line.
    static let maxSessionURIBytes = 7 * 1024

    func startResumable(_ call: JSONCall, bucket: String) async throws -> HTTPResponse {
        // The resource is JSON; a body declared as anything else is ignored (as on v0).
        let isJSON = call.headers["Content-Type"].map { $0.lowercased().contains("json") } ?? true
        let fields =
            isJSON
            ? try ObjectResourceJSON.decodeUpload(try await collectJSONBody(call))
            : ObjectResourceJSON.UploadFields()
        let object = try StorageService.objectPath(bucket, try Self.objectName(call, resource: fields.name))
        call.record.objectName = object.name
        let declaredSize = try Self.nonNegative(call.headers["X-Upload-Content-Length"], "X-Upload-Content-Length")
        let request = UploadRequest(
            object: object,
            attributes: try Self.completeAttributes(
                call, fields.attributes,
                contentType: call.headers["X-Upload-Content-Type"]),
            expectedMD5: fields.md5Hash ?? Self.declaredHash(call, "md5"),
            expectedCRC32C: fields.crc32c ?? Self.declaredHash(call, "crc32c"),
            preconditions: try RequestConditions.generation(call.query), mintDownloadToken: false)
        let uploadID = try await service.startResumable(
            request, declaredSize: declaredSize, caller: call.caller,
            call.context)
        let location =
            baseURL(call) + (call.request.path.bytesHasPrefix("/resumable/") ? "/resumable" : "")
            + "/upload/storage/v1/b/" + PercentEncoding.uriComponent.encode(bucket)
            + "/o?uploadType=resumable&name=" + PercentEncoding.uriComponent.encode(object.name) + "&upload_id="
            + uploadID
        guard location.utf8.count <= Self.maxSessionURIBytes else {
            try? await service.resumableUpload(uploadID, bucket: bucket, call.context).cancel()
            throw ServiceError.badRequest("The upload's metadata and credentials are too large for a session URI.")
        }
        var headers = HTTPHeaders()
        headers.add("Location", location)
        headers.add("X-GUploader-UploadID", uploadID)
        headers.add("Content-Type", "text/plain; charset=utf-8")
        return HTTPResponse(status: 200, headers: headers, body: .empty)
    }

    func resumable(_ call: JSONCall, bucket: String, uploadID: String) async throws -> HTTPResponse {
        let upload = try service.resumableUpload(uploadID, bucket: bucket, call.context)
        if call.request.method == .delete {
            try await upload.cancel()
            var headers = HTTPHeaders()
            headers.add("Content-Type", "text/plain; charset=utf-8")
            return HTTPResponse(status: 499, headers: headers, body: .empty)
        }
        let range = try ContentRange.parse(call.headers["Content-Range"], bodyLength: call.request.body.expectedLength)
        do {
            guard let first = range.first else { return try await status(call, upload, total: range.total) }
            let stored: Int64
            switch try await upload.append(at: first, body: call.request.body) {
            case .stored(let size): stored = size
            // The wrong offset: nothing stored; tell the client where the upload stands.
            case .offsetMismatch(let persisted): return Self.incomplete(call, stored: persisted)
            }
            if let last = range.last, stored != last + 1 {
                throw ServiceError.badRequest(
                    "The chunk holds \(stored - first) bytes; Content-Range declared \(last + 1 - first).")
            }
            if let total = range.total, stored == total {
                return objectResponse(
                    call,
                    try await upload.finalize(
                        stagedSize: stored, md5: Self.declaredHash(call, "md5"),
                        crc32c: Self.declaredHash(call, "crc32c")))
            }
            if let total = range.total, stored > total {
                throw ServiceError.badRequest("The upload has more bytes than the declared total of \(total).")
            }
            return Self.incomplete(call, stored: stored)
        } catch let failure as ResumableFailure {
            // A finalize that disagreed with what is staged: tell the client where the upload stands.
            guard failure.standing == .open, let persisted = failure.persisted else { throw failure }
            return Self.incomplete(call, stored: persisted)
        }
    }

    /// A status query: 308 while bytes are missing, the resource once finished; `*/TOTAL` with all TOTAL bytes
    /// stored finalizes.
    private func status(_ call: JSONCall, _ upload: ResumableUpload, total: Int64?) async throws -> HTTPResponse {
        switch try await upload.state() {
        case .active(let size)?:
            if let total, total == size {
                return objectResponse(
                    call,
                    try await upload.finalize(
                        stagedSize: size, md5: Self.declaredHash(call, "md5"),
                        crc32c: Self.declaredHash(call, "crc32c")))
            }
            return Self.incomplete(call, stored: size)
        case .finalized(_, let generation)?:
            guard let meta = try await upload.committedObject(generation: generation) else {
                throw ServiceError.notFound("The uploaded object was replaced or deleted since.")
            }
            return objectResponse(call, meta)
        case .cancelled?:
            throw ServiceError(.clientClosed, "The upload was cancelled.")
        case nil:
            throw ServiceError.notFound("Unknown or expired upload.")
        }
    }

    /// `308 Resume Incomplete` with `Range: bytes=0-N` (no `Range` while nothing is stored), or its
    /// `X-GUploader-No-308` form: 200 with `X-HTTP-Status-Code-Override: 308`.
    static func incomplete(_ call: JSONCall, stored: Int64) -> HTTPResponse {
        var headers = HTTPHeaders()
        if stored > 0 { headers.add("Range", "bytes=0-\(stored - 1)") }
        headers.add("Content-Length", "0")
        if let no308 = call.headers["X-GUploader-No-308"], no308.trimmingSpaces().bytesEqualIgnoringASCIICase("yes") {
            headers.add("X-HTTP-Status-Code-Override", "308")
            return HTTPResponse(status: 200, headers: headers, body: .empty)
        }
        return HTTPResponse(status: 308, headers: headers, body: .empty, reason: "Resume Incomplete")
    }

    static func nonNegative(_ text: String?, _ name: String) throws(ServiceError) -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text.trimmingSpaces()), value >= 0 else {
            throw .badRequest("\(name) must be a non-negative integer.")
        }
        return value
    }
}

/// A resumable request's `Content-Range` (RFC 9110 §14.4 as GCS uses it on requests): `bytes FIRST-LAST/TOTAL`,
/// `bytes FIRST-LAST/*`, `bytes */TOTAL` (status query or final empty chunk), `bytes */*` (status query).
/// Absent: the body is the whole object (FIRST 0, TOTAL = its length when known).
struct ContentRange: Equatable {
    var first: Int64?
    var last: Int64?
    var total: Int64?

    static func parse(_ header: String?, bodyLength: Int64?) throws(ServiceError) -> ContentRange {
        guard let header else {
            return ContentRange(
                first: 0, last: bodyLength.map { $0 - 1 }.flatMap { $0 >= 0 ? $0 : nil },
                total: bodyLength)
        }
        let text = header.trimmingSpaces()
        guard let (spanText, totalPart) = text.bytesRemovingPrefix("bytes ")?.bytesCut(at: UInt8(ascii: "/")) else {
            throw invalid(header)
        }
        let span = spanText.trimmingSpaces()
        let totalText = totalPart.trimmingSpaces()
        var range = ContentRange()
        if !totalText.bytesEqual("*") {
            guard let total = Int64(totalText), total >= 0 else { throw invalid(header) }
            range.total = total
        }
        if span.bytesEqual("*") { return range }
        let bounds = span.bytesSplit(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0, last >= first
        else { throw invalid(header) }
        if let total = range.total, last >= total { throw invalid(header) }
        range.first = first
        range.last = last
        return range
    }

    private static func invalid(_ header: String) -> ServiceError {
        .badRequest("Invalid Content-Range: \(header).")
    }
}
