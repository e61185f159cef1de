import HTTPServer
import PortcullisCore
import Service

/// `objects.insert`: `uploadType=media` (the body is the object), `multipart` (resource JSON, then the bytes)
/// and `resumable` (a session; see JSONAPI+Resumable.swift). Objects uploaded here get no download token
/// unless the resource names one (`metadata.firebaseStorageDownloadTokens`), as on GCS; the first v0 read
/// mints one, as Firebase does.
extension JSONAPI {
    func upload(_ call: JSONCall, bucket: String, kind: JSONOperation.UploadKind) async throws -> HTTPResponse {
        try checkUploadHeaders(call)
        switch kind {
        case .media: return try await uploadMedia(call, bucket: bucket)
        case .multipart: return try await uploadMultipart(call, bucket: bucket)
        case .resumable: return try await startResumable(call, bucket: bucket)
        }
    }

    /// Refuses, on every upload kind and before any byte is read, what the headers already show is wrong: a
    /// body (`Content-Length`) or declared size (`X-Upload-Content-Length`) over the ceiling is 413; a
    /// malformed declared size or an unsafe `X-Upload-Content-Type` is 400 — so no request carrying nonsense
    /// is silently accepted.
    func checkUploadHeaders(_ call: JSONCall) throws(ServiceError) {
        let limit = service.configuration.maxObjectBytes
        let envelope = Int64(service.configuration.maxJSONBodyBytes) + 64 * 1024
        if let length = call.request.body.expectedLength, length > limit + envelope {
            throw .payloadTooLarge(limit: limit)
        }
        if let declared = try Self.nonNegative(call.headers["X-Upload-Content-Length"], "X-Upload-Content-Length"),
            declared > limit
        {
            throw .payloadTooLarge(limit: limit)
        }
        if let type = call.headers["X-Upload-Content-Type"] {
            try ObjectResourceJSON.checkHeaderSafe(type, "X-Upload-Content-Type")
        }
    }

    /// The object name: the resource's `name`, else `?name=` (400 `required` when neither is given).
    static func objectName(_ call: JSONCall, resource: String?) throws(ServiceError) -> String {
        guard let name = resource ?? call.query["name"], !name.isEmpty else {
            throw .badRequest("Required parameter: name.")
        }
        return name
    }

    /// What the request declares about the bytes in `X-Goog-Hash: md5=…, crc32c=…` (a digest in the resource
    /// wins over the header's).
    static func declaredHash(_ call: JSONCall, _ algorithm: String) -> String? {
        guard let header = call.headers["X-Goog-Hash"] else { return nil }
        for part in header.bytesSplit(separator: UInt8(ascii: ",")) {
            guard let (name, value) = part.trimmingSpaces().bytesCut(at: UInt8(ascii: "=")) else { continue }
            if name.bytesEqual(algorithm) { return value }
        }
        return nil
    }

    /// Fills GCS's upload defaults: `contentType` from the given header, else `application/octet-stream`;
    /// `contentEncoding` from `?contentEncoding=` when the resource has none.
    static func completeAttributes(_ call: JSONCall, _ attributes: ObjectAttributes, contentType: String?)
        throws(ServiceError) -> ObjectAttributes
    {
        var a = attributes
        if a.contentType == nil {
            if let contentType, !contentType.isEmpty {
                try ObjectResourceJSON.checkHeaderSafe(contentType, "Content-Type")
                a.contentType = contentType
            } else {
                a.contentType = "application/octet-stream"
            }
        }
        if a.contentEncoding == nil, let encoding = call.query["contentEncoding"] {
            try ObjectResourceJSON.checkHeaderSafe(encoding, "contentEncoding")
            a.contentEncoding = encoding
        }
        return a
    }

    func uploadMedia(_ call: JSONCall, bucket: String) async throws -> HTTPResponse {
        let object = try StorageService.objectPath(bucket, try Self.objectName(call, resource: nil))
        call.record.objectName = object.name
        let request = UploadRequest(
            object: object,
            attributes: try Self.completeAttributes(
                call, ObjectAttributes(), contentType: call.headers["Content-Type"]),
            possibleSizes: call.request.body.expectedLength.map { [$0] } ?? [],
            expectedMD5: Self.declaredHash(call, "md5"), expectedCRC32C: Self.declaredHash(call, "crc32c"),
            preconditions: try RequestConditions.generation(call.query), mintDownloadToken: false)
        return objectResponse(
            call,
            try await service.upload(
                request, body: call.request.body, caller: call.caller,
                call.context))
    }

    func uploadMultipart(_ call: JSONCall, bucket: String) async throws -> HTTPResponse {
        let contentType = call.headers["Content-Type"] ?? ""
        guard let boundary = MultipartReader.boundary(contentType: contentType) else {
            throw ServiceError.badRequest(MultipartError.badContentType(contentType).description)
        }
        let preconditions = try RequestConditions.generation(call.query)
        let upload = try await MultipartUpload.open(
            body: call.request.body, boundary: boundary,
            jsonLimit: service.configuration.maxJSONBodyBytes)
        let fields = try ObjectResourceJSON.decodeUpload(upload.metadata)
        let object = try StorageService.objectPath(bucket, try Self.objectName(call, resource: fields.name))
        call.record.objectName = object.name
        let request = UploadRequest(
            object: object,
            attributes: try Self.completeAttributes(call, fields.attributes, contentType: upload.mediaContentType),
            possibleSizes: upload.possibleSizes, expectedMD5: fields.md5Hash ?? Self.declaredHash(call, "md5"),
            expectedCRC32C: fields.crc32c ?? Self.declaredHash(call, "crc32c"),
            preconditions: preconditions, mintDownloadToken: false)
        return objectResponse(
            call,
            try await service.upload(
                request, body: upload.media, caller: call.caller,
                call.context))
    }
}
