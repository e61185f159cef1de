import HTTPServer
import PortcullisCore
import Service
import Storage

/// The resumable ("X-Goog-Upload") protocol (openapi/portcullis.yaml) over the service's resumable uploads: `start` opens
/// one and hands out its upload URL; upload, finalize, query and cancel act on the upload the URL names.
extension V0API {
    /// Longest upload URL handed out: below the HTTP server's 8 KiB request line with room for the method.
    static let maxUploadURLBytes = 7 * 1024

    func resumableStart(_ call: V0Call, bucket: String, name objectName: String) async throws -> HTTPResponse {
        let fields =
            Self.bodyIsJSON(call)
            ? try ObjectResourceJSON.decodeUpload(try await collectJSONBody(call))
            : ObjectResourceJSON.UploadFields()
        let object = try V0Router.objectPath(bucket, objectName)
        try checkDeclaredLength(call, allowance: Int64(service.configuration.maxJSONBodyBytes))
        let declaredSize = try Self.int64Header(
            call.headers, "X-Goog-Upload-Header-Content-Length",
            "X-Goog-Upload-Content-Length")
        let headerType = call.headers["X-Goog-Upload-Header-Content-Type"] ?? call.headers["X-Goog-Upload-Content-Type"]
        if let headerType { try ObjectResourceJSON.checkHeaderSafe(headerType, "X-Goog-Upload-Header-Content-Type") }
        let request = UploadRequest(
            object: object, attributes: Self.completeAttributes(fields.attributes, contentType: headerType),
            expectedMD5: fields.md5Hash, preconditions: try RequestConditions.generation(call.query),
            mintDownloadToken: true)
        let uploadID = try await service.startResumable(
            request, declaredSize: declaredSize, caller: call.caller,
            call.context)
        let url =
            baseURL(call) + "/v0/b/" + PercentEncoding.uriComponent.encode(bucket) + "/o?name="
            + PercentEncoding.uriComponent.encode(objectName) + "&upload_id=" + uploadID + "&upload_protocol=resumable"
        // The URL carries the whole capability; it must fit the server's request-line limit (8 KiB).
        guard url.utf8.count <= Self.maxUploadURLBytes else {
            try? await service.resumableUpload(uploadID, bucket: bucket, call.context).cancel()
            throw ServiceError.badRequest(
                "The upload's metadata and credentials are too large for a resumable upload URL.")
        }
        var headers = HTTPHeaders()
        headers.add("X-Goog-Upload-Status", "active")
        headers.add("X-Goog-Upload-URL", url)
        headers.add("X-Goog-Upload-Chunk-Granularity", String(Self.chunkGranularity))
        headers.add("Content-Type", "text/plain; charset=utf-8")
        return HTTPResponse(status: 200, headers: headers, body: .empty)
    }

    func resumableContinue(_ call: V0Call, bucket: String, uploadID: String) async throws -> HTTPResponse {
        let upload = try service.resumableUpload(uploadID, bucket: bucket, call.context)
        let commands = (call.headers["X-Goog-Upload-Command"] ?? "").bytesSplit(separator: UInt8(ascii: ","))
            .map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty }
        guard !commands.isEmpty else { throw ServiceError.badRequest("Missing X-Goog-Upload-Command.") }
        let set = Set(commands)
        if set == ["query"] { return try await query(upload) }
        if set == ["cancel"] {
            try await upload.cancel()
            return Self.uploadStatus("cancelled", size: nil)
        }
        guard set.isSubset(of: ["upload", "finalize"]) else {
            throw ServiceError.badRequest("Unsupported X-Goog-Upload-Command.")
        }
        var size: Int64?
        if set.contains("upload") {
            guard let offset = try Self.int64Header(call.headers, "X-Goog-Upload-Offset") else {
                throw ResumableFailure(.badRequest("Missing X-Goog-Upload-Offset."), standing: .open)
            }
            switch try await upload.append(at: offset, body: call.request.body) {
            case .stored(let stored): size = stored
            case .offsetMismatch(let persisted): throw V0ErrorShape.offsetMismatch(persisted: persisted)
            }
        }
        if set.contains("finalize") {
            let meta = try await upload.finalize(stagedSize: size)
            return Self.uploadStatus("final", size: meta.size, body: V0MetadataJSON.encode(meta))
        }
        return Self.uploadStatus("active", size: size ?? 0)
    }

    private func query(_ upload: ResumableUpload) async throws -> HTTPResponse {
        switch try await upload.state() {
        case .active(let size)?: return Self.uploadStatus("active", size: size)
        case .finalized(let size, _)?: return Self.uploadStatus("final", size: size)
        case .cancelled?: return Self.uploadStatus("cancelled", size: 0)
        case nil: throw ServiceError.notFound("Unknown or expired upload.")
        }
    }

    /// A 200 carrying the upload's status (and, when finished, the object's metadata).
    static func uploadStatus(_ status: String, size: Int64?, body: [UInt8]? = nil) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("X-Goog-Upload-Status", status)
        if let size { headers.add("X-Goog-Upload-Size-Received", String(size)) }
        if let body {
            headers.add("Content-Type", "application/json; charset=utf-8")
            return HTTPResponse(status: 200, headers: headers, body: .bytes(body))
        }
        return HTTPResponse(status: 200, headers: headers)
    }
}
