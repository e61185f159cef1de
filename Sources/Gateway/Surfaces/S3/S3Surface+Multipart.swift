import Crypto
import HTTPServer
import PortcullisCore
import Service
import Storage

/// CreateMultipartUpload, UploadPart, ListParts, CompleteMultipartUpload, AbortMultipartUpload — staged and
/// committed by the service (`StorageService.startMultipart` and its siblings), so completion is one atomic
/// write judged by the rules.
extension S3Surface {
    func multipart(_ call: S3Call, _ object: ObjectPath) async throws -> HTTPResponse? {
        let method = call.request.method
        if method == .post, call.query.contains("uploads") { return try await createMultipart(call, object) }
        guard let id = call.query["uploadId"] else { return nil }
        let target = MultipartTarget(object: object, id: id)
        switch method {
        case .put:
            if call.headers.contains("x-amz-copy-source") { return try await uploadPartCopy(call, target) }
            return try await uploadPart(call, target)
        case .get: return try await listParts(call, target)
        case .post: return try await completeMultipart(call, target)
        case .delete:
            try await service.abortMultipart(target, caller: call.caller, call.context)
            return HTTPResponse(status: 204, headers: HTTPHeaders(), body: .empty)
        default: throw S3Error.notImplemented("\(method) on a multipart upload")
        }
    }

    private func createMultipart(_ call: S3Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let id = try await service.startMultipart(
            UploadRequest(
                object: object, attributes: try S3ObjectMapping.attributes(call.headers), mintDownloadToken: false),
            caller: call.caller, call.context)
        return Self.xml(MultipartDocuments.initiated(object, id: id))
    }

    private func uploadPart(_ call: S3Call, _ target: MultipartTarget) async throws -> HTTPResponse {
        guard let number = call.query["partNumber"].flatMap({ Int($0) }) else {
            throw S3Error(400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive.")
        }
        let md5 = try call.headers["Content-MD5"].map { text throws(S3Error) -> [UInt8] in
            guard let bytes = Base64.decode(text), bytes.count == 16 else {
                throw S3Error(400, "InvalidDigest", "The Content-MD5 you specified was invalid.")
            }
            return bytes
        }
        let body: any ByteStream =
            md5 == nil
            ? call.body : DigestCheckedStream(call.body, sha256: nil, md5: md5, crc32c: nil, verdict: call.verdict)
        let part = try await service.uploadPart(
            target, number: number, body: body, expectedMD5: nil, caller: call.caller, call.context)
        var headers = HTTPHeaders()
        headers.add("ETag", S3ObjectMapping.etag(part))
        return HTTPResponse(status: 200, headers: headers, body: .empty)
    }

    /// UploadPartCopy: a part from `x-amz-copy-source` (optionally `x-amz-copy-source-range: bytes=A-B`), with
    /// the source's `x-amz-copy-source-if-*` conditions.
    private func uploadPartCopy(_ call: S3Call, _ target: MultipartTarget) async throws -> HTTPResponse {
        guard let number = call.query["partNumber"].flatMap({ Int($0) }) else {
            throw S3Error(400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive.")
        }
        let source = try Self.copySource(call.headers["x-amz-copy-source"] ?? "")
        var range: ByteRangeSpec?
        if let text = call.headers["x-amz-copy-source-range"] {
            guard let parsed = ByteRangeSpec.parse(text) else {
                throw S3Error(
                    400, "InvalidArgument", "The x-amz-copy-source-range value must be of the form bytes=first-last.")
            }
            range = parsed
        }
        let conditions = try await S3Conditions.copySource(call, source, service: service)
        let part = try await service.uploadPartCopy(
            target, number: number, source: source, sourceConditions: conditions, range: range, caller: call.caller,
            call.context)
        var xml = S3XMLWriter(root: "CopyPartResult")
        xml.element("LastModified", part.updated.s3XMLTime)
        xml.element("ETag", S3ObjectMapping.etag(part))
        return Self.xml(xml.finished(root: "CopyPartResult"))
    }

    private func listParts(_ call: S3Call, _ target: MultipartTarget) async throws -> HTTPResponse {
        let parts = try await service.listParts(target, caller: call.caller, call.context)
        let marker = call.query["part-number-marker"].flatMap { Int($0) } ?? 0
        let limit = min(call.query["max-parts"].flatMap { Int($0) } ?? 1000, 1000)
        return Self.xml(MultipartDocuments.partList(target, parts, marker: marker, limit: limit))
    }

    private func completeMultipart(_ call: S3Call, _ target: MultipartTarget) async throws -> HTTPResponse {
        let document: [UInt8]
        do {
            document = try await call.body.collect(limit: 4 << 20)
        } catch {
            if let recorded = call.verdict.recorded { throw recorded }
            throw S3Error.malformedXML
        }
        let chosen: [(number: Int, md5: [UInt8])]
        do { chosen = try MultipartDocuments.completionParts(document) } catch {
            switch error {
            case .malformed: throw S3Error.malformedXML
            case .unknownPart:
                throw S3Error(400, "InvalidPart", "One or more of the specified parts could not be found.")
            }
        }
        let meta = try await service.completeMultipart(target, parts: chosen, caller: call.caller, call.context)
        return Self.xml(MultipartDocuments.completed(target.object, etag: S3ObjectMapping.etag(meta)))
    }

    /// ListMultipartUploads: the caller's unfinished uploads (all of them for an admin), `prefix` and
    /// `max-uploads`; one page (no markers: an upload list longer than `max-uploads` is truncated).
    func listUploads(_ call: S3Call, _ bucket: String) async throws -> HTTPResponse {
        let limit = min(max(call.query["max-uploads"].flatMap { Int($0) } ?? 1000, 0), 1000)
        let prefix = call.query["prefix"] ?? ""
        let uploads = try await service.listMultipartUploads(
            bucket, prefix: prefix, limit: limit + 1, caller: call.caller, call.context)
        return Self.xml(MultipartDocuments.uploadList(bucket: bucket, prefix: prefix, limit: limit, uploads))
    }
}
