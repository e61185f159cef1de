import Auth
import Crypto
import HTTPServer
import PortcullisCore
import Service

/// Cloud Storage's XML API multipart upload, as google-cloud-storage's transfer manager
/// (`upload_chunks_concurrently`) drives it: `POST ?uploads` starts an upload (the object's headers and
/// `x-goog-meta-*` given then), `PUT ?partNumber=N&uploadId=ID` stores a part (answered with its quoted MD5 as
/// `ETag` and `x-goog-hash`), `POST ?uploadId=ID` with a `CompleteMultipartUpload` document commits the parts it
/// names, `DELETE ?uploadId=ID` aborts, `GET ?uploadId=ID` lists the parts and `GET /{bucket}?uploads` the caller's
/// unfinished uploads. The documents are S3's (`MultipartDocuments`); staging, the rules (judged at the start and
/// on the completed object) and the one atomic commit are the service's, shared with the S3 surface.
extension XMLAPISurface {
    /// Whether the request's query names `uploads` or `uploadId` (the multipart calls).
    static func namesMultipart(_ request: HTTPRequest) -> Bool {
        request.query.map { GatewayRouter.names($0, anyOf: multipartKeyBytes) } ?? false
    }

    /// Whether the request's query carries a signed URL's signature.
    static func isSigned(_ request: HTTPRequest) -> Bool {
        request.query.map { GatewayRouter.names($0, anyOf: signatureKeyBytes) } ?? false
    }

    private static let multipartKeyBytes = multipartKeys.map { Array($0.utf8) }
    private static let signatureKeyBytes = GoogleSignedURL.gateKeys.map { Array($0.utf8) }

    func multipart(_ matched: MatchedRequest) async -> HTTPResponse {
        let record = matched.record
        let request = matched.request
        do {
            let caller: Caller
            switch try checkSigner(matched) {
            case .caller(let signer): caller = signer
            case .refused(let response): return response
            }
            let object = try objectPath(matched)
            let query = try QueryParameters(
                parsing: request.query, singleValued: Self.signingParameters + ["uploadId", "partNumber"])
            if request.method == .post, query.contains("uploads") {
                let id = try await service.startMultipart(
                    UploadRequest(
                        object: object, attributes: try Self.attributes(request.headers), mintDownloadToken: false),
                    caller: caller, matched.context)
                return Self.xml(MultipartDocuments.initiated(object, id: id))
            }
            guard let id = query["uploadId"] else {
                throw ServiceError.badRequest("A multipart upload is started with POST ?uploads.")
            }
            let target = MultipartTarget(object: object, id: id)
            switch request.method {
            case .put:
                guard let number = query["partNumber"].flatMap({ Int($0) }) else {
                    throw ServiceError.badRequest("Part number must be an integer between 1 and 10000, inclusive.")
                }
                let part = try await service.uploadPart(
                    target, number: number, body: request.body, expectedMD5: request.headers["Content-MD5"],
                    caller: caller, matched.context)
                var headers = HTTPHeaders()
                let md5 = part.md5Hash.flatMap { Base64.decode($0) } ?? []
                headers.add("ETag", MultipartDocuments.partETag(md5))
                ObjectHeaders.addHashes(part, to: &headers)
                return HTTPResponse(status: 200, headers: headers, body: .empty)
            case .post:
                let document: [UInt8]
                do { document = try await request.body.collect(limit: 4 << 20) } catch {
                    throw ServiceError.badRequest("The CompleteMultipartUpload document is too large or incomplete.")
                }
                let chosen: [(number: Int, md5: [UInt8])]
                do { chosen = try MultipartDocuments.completionParts(document) } catch {
                    throw ServiceError.badRequest(
                        error == .malformed
                            ? "The XML you provided was not well-formed or did not validate against our published schema."
                            : "One or more of the specified parts could not be found.")
                }
                let meta = try await service.completeMultipart(
                    target, parts: chosen, recordingS3ETag: false, caller: caller, matched.context)
                var response = Self.xml(MultipartDocuments.completed(object, etag: EntityTag.quoted(meta)))
                ObjectHeaders.addHashes(meta, to: &response.headers)
                response.headers.add("x-goog-generation") { DecimalText.append(meta.generation, to: &$0) }
                return response
            case .delete:
                try await service.abortMultipart(target, caller: caller, matched.context)
                return HTTPResponse(status: 204, headers: HTTPHeaders(), body: .empty)
            case .get:
                let parts = try await service.listParts(target, caller: caller, matched.context)
                let marker = query["part-number-marker"].flatMap { Int($0) } ?? 0
                let limit = min(query["max-parts"].flatMap { Int($0) } ?? 1000, 1000)
                return Self.xml(MultipartDocuments.partList(target, parts, marker: marker, limit: limit))
            default:
                throw ServiceError.badRequest("\(request.method.rawValue) is not a multipart-upload call.")
            }
        } catch {
            return failureResponse(for: error, record: record, logger: logger)
        }
    }

    /// `GET /{bucket}?uploads`: the caller's unfinished uploads (every one for the admin), `prefix` and
    /// `max-uploads`, one page.
    func listUploads(_ matched: MatchedRequest) async -> HTTPResponse {
        let record = matched.record
        do {
            let caller: Caller
            switch try checkSigner(matched) {
            case .caller(let signer): caller = signer
            case .refused(let response): return response
            }
            guard matched.request.method == .get else {
                throw ServiceError.badRequest("Unfinished uploads are listed with GET /{bucket}?uploads.")
            }
            guard let bucketText = matched.match["bucket"],
                let bucket = PercentEncoding.decode(bucketText, plusIsSpace: false)
            else { throw ServiceError.badRequest("Malformed percent-encoding in the path.") }
            record.bucket = bucket
            let query = try QueryParameters(parsing: matched.request.query, singleValued: Self.signingParameters)
            let limit = min(max(query["max-uploads"].flatMap { Int($0) } ?? 1000, 0), 1000)
            let prefix = query["prefix"] ?? ""
            let uploads = try await service.listMultipartUploads(
                bucket, prefix: prefix, limit: limit + 1, caller: caller, matched.context)
            return Self.xml(MultipartDocuments.uploadList(bucket: bucket, prefix: prefix, limit: limit, uploads))
        } catch {
            return failureResponse(for: error, record: record, logger: logger)
        }
    }

    static func xml(_ body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/xml; charset=UTF-8")
        return HTTPResponse(status: 200, headers: headers, body: .bytes(body))
    }
}
