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
        var xml = S3XMLWriter(root: "InitiateMultipartUploadResult")
        xml.element("Bucket", object.bucket)
        xml.element("Key", object.name)
        xml.element("UploadId", id)
        return Self.xml(xml.finished(root: "InitiateMultipartUploadResult"))
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
        let after = parts.filter { $0.number > marker }
        let page = after.prefix(max(limit, 0))
        var xml = S3XMLWriter(root: "ListPartsResult")
        xml.element("Bucket", target.object.bucket)
        xml.element("Key", target.object.name)
        xml.element("UploadId", target.id)
        xml.element("PartNumberMarker", Int64(marker))
        if let last = page.last { xml.element("NextPartNumberMarker", Int64(last.number)) }
        xml.element("MaxParts", Int64(limit))
        xml.element("IsTruncated", after.count > page.count)
        xml.element("StorageClass", "STANDARD")
        for part in page {
            xml.open("Part")
            xml.element("PartNumber", Int64(part.number))
            xml.element("LastModified", part.metadata.updated.s3XMLTime)
            xml.element("ETag", "\"" + S3SigV4.hex(part.md5) + "\"")
            xml.element("Size", part.metadata.size)
            xml.close("Part")
        }
        return Self.xml(xml.finished(root: "ListPartsResult"))
    }

    private func completeMultipart(_ call: S3Call, _ target: MultipartTarget) async throws -> HTTPResponse {
        let document: [UInt8]
        do {
            document = try await call.body.collect(limit: 4 << 20)
        } catch {
            if let recorded = call.verdict.recorded { throw recorded }
            throw S3Error.malformedXML
        }
        let root: XMLReader.Element
        do { root = try XMLReader.parse(document) } catch { throw S3Error.malformedXML }
        guard root.name.bytesEqual("CompleteMultipartUpload") else { throw S3Error.malformedXML }
        var chosen: [(number: Int, md5: [UInt8])] = []
        for part in root.children where part.name.bytesEqual("Part") {
            func field(_ name: String) -> String? { part.children.first { $0.name.bytesEqual(name) }?.text }
            guard let number = field("PartNumber").flatMap({ Int($0.trimmingSpaces()) }),
                var etag = field("ETag")?.trimmingSpaces()
            else { throw S3Error.malformedXML }
            if etag.bytesHasPrefix("\""), etag.bytesHasSuffix("\""), etag.utf8.count >= 2 {
                etag = String(etag.dropFirst().dropLast())
            }
            guard let md5 = Self.hexBytes(etag), md5.count == 16 else {
                throw S3Error(400, "InvalidPart", "One or more of the specified parts could not be found.")
            }
            chosen.append((number, md5))
        }
        let meta = try await service.completeMultipart(target, parts: chosen, caller: call.caller, call.context)
        var xml = S3XMLWriter(root: "CompleteMultipartUploadResult")
        xml.element("Location", "/" + target.object.bucket + "/" + target.object.name)
        xml.element("Bucket", target.object.bucket)
        xml.element("Key", target.object.name)
        xml.element("ETag", S3ObjectMapping.etag(meta))
        return Self.xml(xml.finished(root: "CompleteMultipartUploadResult"))
    }

    /// ListMultipartUploads: the caller's unfinished uploads (all of them for an admin), `prefix` and
    /// `max-uploads`; one page (no markers: an upload list longer than `max-uploads` is truncated).
    func listUploads(_ call: S3Call, _ bucket: String) async throws -> HTTPResponse {
        let limit = min(max(call.query["max-uploads"].flatMap { Int($0) } ?? 1000, 0), 1000)
        let prefix = call.query["prefix"] ?? ""
        let uploads = try await service.listMultipartUploads(
            bucket, prefix: prefix, limit: limit + 1, caller: call.caller, call.context)
        var xml = S3XMLWriter(root: "ListMultipartUploadsResult")
        xml.element("Bucket", bucket)
        xml.element("KeyMarker", "")
        xml.element("UploadIdMarker", "")
        xml.element("Prefix", prefix)
        xml.element("MaxUploads", Int64(limit))
        xml.element("IsTruncated", uploads.count > limit)
        for upload in uploads.prefix(limit) {
            xml.open("Upload")
            xml.element("Key", upload.name)
            xml.element("UploadId", upload.id)
            xml.element("StorageClass", "STANDARD")
            xml.element("Initiated", upload.initiated.s3XMLTime)
            xml.close("Upload")
        }
        return Self.xml(xml.finished(root: "ListMultipartUploadsResult"))
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count % 2 == 0 else { return nil }
        func value(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard let high = value(bytes[index]), let low = value(bytes[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
