import HTTPServer
import PortcullisCore
import Service

/// One-shot uploads: media (§5.7) and streamed multipart (§5.8).
extension V0API {
    func uploadMedia(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        try checkDeclaredLength(call)
        var attributes = ObjectAttributes()
        if let contentType = call.headers["Content-Type"] {
            try V0MetadataJSON.checkHeaderSafe(contentType, "Content-Type")
            attributes.contentType = contentType
        }
        let request = UploadRequest(
            object: object, attributes: Self.completeAttributes(attributes, contentType: nil),
            possibleSizes: call.request.body.expectedLength.map { [$0] } ?? [],
            preconditions: try RequestConditions.generation(call.query), mintDownloadToken: true)
        let meta = try await service.upload(request, body: call.request.body, caller: call.caller, call.context)
        return Self.metadataResponse(meta)
    }

    func uploadMultipart(_ call: V0Call, bucket: String, name objectName: String, boundary: String) async throws
        -> HTTPResponse {
        try checkDeclaredLength(call, allowance: Int64(service.configuration.maxJSONBodyBytes) + 64 * 1024)
        let preconditions = try RequestConditions.generation(call.query)
        let reader = MultipartReader(body: call.request.body, boundary: boundary)
        do {
            guard try await reader.nextPartHeaders() != nil else { throw MultipartError.unexpectedPartCount }
            let json = try await reader.collectPart(limit: service.configuration.maxJSONBodyBytes)
            let fields = try V0MetadataJSON.decodeUpload(json)
            let object = try V0Router.objectPath(bucket, objectName)
            guard let mediaHeaders = try await reader.nextPartHeaders() else { throw MultipartError.unexpectedPartCount }
            let partType = mediaHeaders.first { HTTPHeaders.equalsIgnoringCase($0.name, "Content-Type") }?.value
            if let partType { try V0MetadataJSON.checkHeaderSafe(partType, "Content-Type") }
            // The media part's size if the body ends the way the SDKs end it (`CRLF--boundary--`), or with one
            // more CRLF after it (curl, most MIME writers).
            var sizes: [Int64] = []
            if let length = call.request.body.expectedLength {
                let estimate = max(0, length - reader.consumedBytes - Int64(boundary.utf8.count + 6))
                sizes = [estimate, max(0, estimate - 2)]
            }
            let request = UploadRequest(
                object: object, attributes: Self.completeAttributes(fields.attributes, contentType: partType),
                possibleSizes: sizes, expectedMD5: fields.md5Hash, preconditions: preconditions,
                mintDownloadToken: true)
            let meta = try await service.upload(request, body: reader.partStream(lastPart: true), caller: call.caller,
                                                call.context)
            return Self.metadataResponse(meta)
        } catch let error as MultipartError {
            throw ServiceError.badRequest(error.description)
        } catch let error as ByteStreamError {
            throw ServiceError(bodyError: error)
        }
    }
}
