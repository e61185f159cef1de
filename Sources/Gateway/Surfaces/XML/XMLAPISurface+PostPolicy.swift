import Auth
import HTTPServer
import PortcullisCore
import Service

/// Browser form uploads with a V4 POST policy (`client.generate_signed_post_policy_v4()`): `POST /{bucket}/` with a
/// `multipart/form-data` body whose fields — `key`, `policy`, `x-goog-algorithm`, `x-goog-credential`,
/// `x-goog-date`, `x-goog-signature`, and whatever the policy names — come before the `file` field. The policy
/// is checked (`PostPolicy`), then the file streams into the object `key` as the signer (bounded by
/// `content-length-range`, never held in memory). Answer: 303 to `success_action_redirect` (with `bucket`, `key`
/// and `etag` added to its query) when given, else `success_action_status` 200 or 201 (with GCS's
/// `<PostResponse>`), else 204.
extension XMLAPISurface {
    /// Limits on the fields before the file: they are held in memory.
    static let maxFieldBytes = 64 * 1024
    static let maxFormFields = 64

    static func isFormUpload(_ request: HTTPRequest) -> Bool {
        request.method == .post
            && MultipartReader.boundary(contentType: request.headers["Content-Type"] ?? "", of: "multipart/form-data")
                != nil
    }

    func formUpload(_ matched: MatchedRequest) async -> HTTPResponse {
        let record = matched.record
        let request = matched.request
        do {
            guard let trust else { throw ServiceError.forbidden("No signer is trusted for form uploads.") }
            guard let bucketText = matched.match["bucket"],
                let bucketName = PercentEncoding.decode(bucketText, plusIsSpace: false)
            else { throw ServiceError.badRequest("Malformed percent-encoding in the path.") }
            if let objectText = matched.match["object"], !objectText.isEmpty {
                throw ServiceError.badRequest(
                    "A form upload is posted to the bucket's URL; the object is its key field.")
            }
            let boundary = MultipartReader.boundary(
                contentType: request.headers["Content-Type"] ?? "", of: "multipart/form-data")!
            let reader = MultipartReader(body: request.body, boundary: boundary)
            var fields: [(name: String, value: String)] = []
            var fileType: String?
            var reachedFile = false
            while let headers = try await reader.nextPartHeaders() {
                guard let name = Self.formFieldName(headers) else {
                    throw ServiceError.badRequest("Every form part needs Content-Disposition: form-data; name=….")
                }
                if name.bytesEqual("file") {
                    fileType = headers.first { $0.name.bytesEqualIgnoringASCIICase("Content-Type") }?.value
                    reachedFile = true
                    break
                }
                guard fields.count < Self.maxFormFields else { throw ServiceError.badRequest("Too many form fields.") }
                let value = try await reader.collectPart(limit: Self.maxFieldBytes)
                fields.append((name, String(decoding: value, as: UTF8.self)))
            }
            guard reachedFile else { throw ServiceError.badRequest("The form has no file field (it must come last).") }
            if let unknown = fields.first(where: { !Self.isFormField($0.name) }) {
                throw ServiceError.badRequest("Invalid form field: \(unknown.name).")
            }
            var resolved: (key: SignedURLKey, grant: ServiceAccountGrant)?
            let accepted: PostPolicy.Accepted
            do {
                accepted = try PostPolicy.verify(fields: fields, bucket: bucketName, now: clock().secondsSinceEpoch) {
                    id in
                    resolved = trust.resolve(id)
                    return resolved?.key
                }
            } catch {
                return refused(error, requestID: record.requestID)
            }
            guard let grant = resolved?.grant else { throw ServiceError.forbidden("The signer is not trusted.") }
            func field(_ name: String) -> String? { fields.first { $0.name.bytesEqual(name) }?.value }
            guard let key = field("key"), !key.isEmpty else { throw ServiceError.badRequest("The form has no key.") }
            let object = try StorageService.objectPath(bucketName, key)
            record.bucket = object.bucket
            record.objectName = object.name
            let principal = grant.principal
            record.principalUID = principal.uid
            var headers = HTTPHeaders()
            for (name, value) in fields { headers.add(name, value) }
            if field("content-type") == nil, let fileType { headers.add("Content-Type", fileType) }
            let body = SizeRangeStream(reader.partStream(lastPart: true), range: accepted.sizeRange)
            let meta = try await service.upload(
                UploadRequest(object: object, attributes: try Self.attributes(headers), mintDownloadToken: false),
                body: body, caller: Caller(principal: principal), matched.context)
            var answer = HTTPHeaders()
            answer.add("ETag") { EntityTag.appendQuoted(meta, to: &$0) }
            if let redirect = field("success_action_redirect"), Self.isHTTPURL(redirect) {
                // The policy covers the field (every field must be named by a condition), so the signer chose it.
                let separator = redirect.utf8.contains(UInt8(ascii: "?")) ? "&" : "?"
                answer.add(
                    "Location",
                    redirect + separator + "bucket=" + PercentEncoding.unreserved.encode(object.bucket) + "&key="
                        + PercentEncoding.unreserved.encode(object.name) + "&etag="
                        + PercentEncoding.unreserved.encode(meta.etag))
                return HTTPResponse(status: 303, headers: answer, body: .empty)
            }
            switch field("success_action_status") {
            case "200"?: return HTTPResponse(status: 200, headers: answer, body: .empty)
            case "201"?:
                answer.add("Content-Type", "application/xml; charset=UTF-8")
                let xml =
                    "<?xml version='1.0' encoding='UTF-8'?><PostResponse><Bucket>"
                    + MarkupEscaping.escaped(object.bucket) + "</Bucket><Key>" + MarkupEscaping.escaped(object.name)
                    + "</Key><ETag>" + MarkupEscaping.escaped(meta.etag) + "</ETag></PostResponse>"
                return HTTPResponse(status: 201, headers: answer, body: .bytes(Array(xml.utf8)))
            default: return HTTPResponse(status: 204, headers: answer, body: .empty)
            }
        } catch {
            return failureResponse(for: error, record: record, logger: logger)
        }
    }

    /// The fields Cloud Storage's form upload knows (names lower-cased); any other field is a 400 even when the
    /// policy names it, as in Cloud Storage, so a field the upload would silently ignore is never taken for one
    /// that means something.
    static let formFields: [String] = [
        "acl", "bucket", "cache-control", "content-disposition", "content-encoding", "content-type", "expires", "key",
        "policy", "success_action_redirect", "success_action_status", "x-goog-algorithm", "x-goog-credential",
        "x-goog-custom-time", "x-goog-date", "x-goog-signature",
    ]

    static func isFormField(_ name: String) -> Bool {
        name.utf8.starts(with: "x-goog-meta-".utf8) || name.utf8.starts(with: "x-ignore-".utf8)
            || formFields.contains { $0.bytesEqual(name) }
    }

    /// An absolute http(s) URL without control characters (a redirect target).
    static func isHTTPURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return (lower.hasPrefix("https://") || lower.hasPrefix("http://"))
            && !text.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F })
    }

    /// The `name` parameter of a part's `Content-Disposition: form-data`, lower-cased (field names are
    /// case-insensitive for GCS).
    static func formFieldName(_ headers: [(name: String, value: String)]) -> String? {
        guard let disposition = headers.first(where: { $0.name.bytesEqualIgnoringASCIICase("Content-Disposition") })
        else { return nil }
        for parameter in disposition.value.bytesSplit(separator: UInt8(ascii: ";")).dropFirst() {
            guard let (name, raw) = parameter.trimmingSpaces().bytesCut(at: UInt8(ascii: "=")),
                name.bytesEqualIgnoringASCIICase("name")
            else { continue }
            let value = MultipartReader.unquoted(raw, by: [UInt8(ascii: "\"")])
            return value.isEmpty ? nil : value.lowercased()
        }
        return nil
    }
}

/// The file of a policy upload, held to the policy's `content-length-range`: more bytes than its maximum, or
/// an end before its minimum, fail the upload (400) before anything is committed.
final class SizeRangeStream: ByteStream, @unchecked Sendable {
    // @unchecked: one consumer, never concurrent with itself (the ByteStream contract); `cancel` forwards.
    private let base: any ByteStream
    private let range: ClosedRange<Int64>?
    private var count: Int64 = 0

    init(_ base: any ByteStream, range: ClosedRange<Int64>?) {
        self.base = base
        self.range = range
    }

    var expectedLength: Int64? { base.expectedLength }

    func next(maxLength: Int) async throws -> [UInt8]? {
        let chunk = try await base.next(maxLength: maxLength)
        guard let range else { return chunk }
        if let chunk {
            count += Int64(chunk.count)
            if count > range.upperBound {
                throw ServiceError.badRequest("The file is larger than the policy's content-length-range allows.")
            }
        } else if count < range.lowerBound {
            throw ServiceError.badRequest("The file is smaller than the policy's content-length-range allows.")
        }
        return chunk
    }

    func cancel() { base.cancel() }
}
