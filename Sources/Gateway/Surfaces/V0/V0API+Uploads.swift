import HTTPServer
import PortcullisCore
import Service

/// One-shot uploads: media and streamed multipart.
extension V0API {
    func uploadMedia(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        try checkDeclaredLength(call)
        var attributes = ObjectAttributes()
        if let contentType = call.headers["Content-Type"] {
            try ObjectResourceJSON.checkHeaderSafe(contentType, "Content-Type")
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
        -> HTTPResponse
    {
        try checkDeclaredLength(call, allowance: Int64(service.configuration.maxJSONBodyBytes) + 64 * 1024)
        let preconditions = try RequestConditions.generation(call.query)
        let upload = try await MultipartUpload.open(
            body: call.request.body, boundary: boundary,
            jsonLimit: service.configuration.maxJSONBodyBytes)
        let fields = try ObjectResourceJSON.decodeUpload(upload.metadata)
        let object = try V0Router.objectPath(bucket, objectName)
        let request = UploadRequest(
            object: object,
            attributes: Self.completeAttributes(fields.attributes, contentType: upload.mediaContentType),
            possibleSizes: upload.possibleSizes, expectedMD5: fields.md5Hash, preconditions: preconditions,
            mintDownloadToken: true)
        let meta = try await service.upload(request, body: upload.media, caller: call.caller, call.context)
        return Self.metadataResponse(meta)
    }
}
