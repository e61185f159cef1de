public import Auth
import Crypto
import HTTPServer
public import PortcullisCore
public import Service

/// Cloud Storage's XML API on its path-style form `/{bucket}/{object}`, for the two things clients use it for
/// beside the JSON API: Google's signed URLs (V4 `X-Goog-*` and V2 `GoogleAccessId`/`Expires`/`Signature`, what
/// `blob.generate_signed_url()` makes, used with any HTTP client) and multipart uploads (`?uploads`,
/// `?partNumber=&uploadId=`, `?uploadId=`: google-cloud-storage's `transfer_manager.upload_chunks_concurrently`,
/// `XMLAPISurface+Multipart`).
///
/// The surface is query-gated (`SurfaceTraits.queryGate`): only a request whose query names `X-Goog-Signature` or
/// `GoogleAccessId` (when signers are trusted), `uploads` or `uploadId` reaches it, so `/{bucket}/{object...}`
/// shadows no other surface's paths, prefixes or 405s. A signed request is checked against the key of a signer
/// `--signed-url-accounts` trusts (`SignedURLTrust`) and runs as that signer's grant — admin, or a registered
/// account's uid and claims under the rules — for GET/HEAD (the bytes), PUT (an upload of the body), DELETE and
/// the resumable start, and GET of the bucket (its listing, `XMLAPISurface+List`). An unsigned multipart request
/// runs as whoever its bearer token names, as on the JSON API. A refused signature is GCS's XML error
/// (`SignatureDoesNotMatch` 403, `ExpiredToken` 400).
public struct XMLAPISurface: APISurface {
    let service: StorageService
    /// Whose signatures are honoured, and as whom; nil: no signed URL is honoured (nor routed here).
    let trust: SignedURLTrust?
    let clock: @Sendable () -> Timestamp
    let logger: Logger
    /// `--public-url`: the base of the session URIs a resumable start hands out.
    let publicURL: String?
    let failures: AuthFailureCounters

    public let traits: SurfaceTraits

    /// The query keys that make a request a multipart-upload call.
    static let multipartKeys = ["uploads", "uploadId"]

    public init(
        service: StorageService, trust: SignedURLTrust?, publicURL: String?, metrics: MetricsRegistry,
        logger: Logger, clock: @escaping @Sendable () -> Timestamp = { .now() }
    ) {
        traits = SurfaceTraits(
            errorShape: XMLErrorShape(),
            corsRequestHeaders: ["Content-Type", "Content-MD5", "X-Request-Id", "traceparent", "x-goog-resumable"],
            corsExposedHeaders: [
                "Content-Type", "Content-Length", "ETag", "X-Request-Id", "x-goog-generation", "x-goog-metageneration",
                "x-goog-hash",
            ],
            loggableQueryKeys: [
                "X-Goog-Algorithm", "X-Goog-Date", "X-Goog-Expires", "X-Goog-SignedHeaders", "Expires", "uploadId",
                "partNumber", "uploads",
            ],
            queryGate: (trust == nil ? [] : GoogleSignedURL.gateKeys) + Self.multipartKeys,
            answersFormPosts: trust != nil)
        failures = AuthFailureCounters(metrics)
        self.publicURL = publicURL
        self.logger = logger
        self.service = service
        self.trust = trust
        self.clock = clock
    }

    /// Parameters a signature depends on: given twice, a proxy and the gateway could read different values.
    static let signingParameters = [
        "X-Goog-Algorithm", "X-Goog-Credential", "X-Goog-Date", "X-Goog-Expires", "X-Goog-SignedHeaders",
        "X-Goog-Signature", "GoogleAccessId", "Expires", "Signature",
    ]

    public var routes: [Route<RouteHandler>] {
        [
            Route([.get, .put, .delete, .post], RouteTemplate(static: "/{bucket}/{object...}")) { [self] in
                await handle($0)
            },
            Route([.get, .post], RouteTemplate(static: "/{bucket}")) { [self] in
                if Self.namesMultipart($0.request) { return await listUploads($0) }
                return $0.request.method == .post ? await formUpload($0) : await listObjects($0)
            },
        ]
    }

    /// What checking a request's signature gave: the signer's caller, or the refusal to answer with.
    enum SignerCheck {
        case caller(Caller)
        case refused(HTTPResponse)
    }

    /// Verifies the request's signature against the signer `--signed-url-accounts` trusts and records the
    /// signer's uid; the request runs as that signer's grant.
    func checkSigner(_ matched: MatchedRequest) throws -> SignerCheck {
        let request = matched.request
        guard let trust, Self.isSigned(request) else {
            // Routed here by a multipart key alone: the caller is who the bearer token names.
            guard Self.namesMultipart(request) else {
                throw ServiceError.forbidden("The request is neither signed nor authorized.")
            }
            return .caller(Caller(principal: matched.principal))
        }
        let query = try QueryParameters(parsing: request.query, singleValued: Self.signingParameters)
        let headers = request.headers
        var names: [String] = []
        for (name, _) in headers.fields where !names.contains(where: { $0.bytesEqual(name.lowercased()) }) {
            names.append(name.lowercased())
        }
        let signed = SignedURLRequest(
            method: request.method.rawValue, path: request.path, query: query.pairs, headerNames: names,
            header: { headers.values($0) })
        // The signer is resolved once: the key that verified the signature and the grant come together.
        var resolved: (key: SignedURLKey, grant: ServiceAccountGrant)?
        do {
            _ = try GoogleSignedURL.verify(signed, now: clock().secondsSinceEpoch) { id in
                resolved = trust.resolve(id)
                return resolved?.key
            }
        } catch {
            return .refused(refused(error, requestID: matched.record.requestID))
        }
        guard let grant = resolved?.grant else { throw ServiceError.forbidden("The signer is not trusted.") }
        matched.record.principalUID = grant.principal.uid
        return .caller(Caller(principal: grant.principal))
    }

    func handle(_ matched: MatchedRequest) async -> HTTPResponse {
        if Self.isFormUpload(matched.request) { return await formUpload(matched) }
        if Self.namesMultipart(matched.request) { return await multipart(matched) }
        let record = matched.record
        let request = matched.request
        do {
            let caller: Caller
            switch try checkSigner(matched) {
            case .caller(let signer): caller = signer
            case .refused(let response): return response
            }
            let object = try objectPath(matched)
            switch request.method {
            case .get, .head: return try await read(object, caller, matched)
            case .put: return try await write(object, caller, matched)
            case .post: return try await startResumable(object, caller, matched)
            default:
                try await service.delete(object, conditions: Conditions(), caller: caller, matched.context)
                return HTTPResponse(status: 204, headers: HTTPHeaders(), body: .empty)
            }
        } catch {
            return failureResponse(for: error, record: record, logger: logger)
        }
    }

    /// The object `/{bucket}/{object...}` names (each segment percent-decoded once), recorded in the access log.
    func objectPath(_ matched: MatchedRequest) throws -> ObjectPath {
        guard let bucketText = matched.match["bucket"], let objectText = matched.match["object"],
            let bucketName = PercentEncoding.decode(bucketText, plusIsSpace: false),
            let name = PercentEncoding.decode(objectText, plusIsSpace: false)
        else { throw ServiceError.badRequest("Malformed percent-encoding in the path.") }
        let object = try StorageService.objectPath(bucketName, name)
        matched.record.bucket = object.bucket
        matched.record.objectName = object.name
        return object
    }

    /// A signature or policy that did not verify: counted by reason, answered in GCS's XML error shape. Both
    /// signed URLs and POST policies end here.
    func refused(_ error: SignedURLError, requestID: String) -> HTTPResponse {
        switch error.kind {
        case .invalid: failures.count(.malformed)
        case .expired: failures.count(.expired)
        case .mismatch: failures.count(.badSignature)
        }
        return XMLErrorShape.response(
            status: error.status, code: error.code, message: error.message, requestID: requestID)
    }

    private func read(_ object: ObjectPath, _ caller: Caller, _ matched: MatchedRequest) async throws -> HTTPResponse {
        let request = matched.request
        let options = ReadOptions(
            conditions: try RequestConditions.parse(QueryParameters(), request.headers),
            range: RequestConditions.range(request.headers), headOnly: request.isHead, ensureDownloadToken: false,
            acceptsGzip: AcceptEncoding.acceptsGzip(request.headers["Accept-Encoding"]))
        let content: ObjectContent
        switch try await service.read(object, caller: caller, options: options, matched.context) {
        case .notModified(let meta): return meta.notModifiedResponse(withCacheControl: false)
        case .content(let c): content = c
        }
        let meta = content.metadata
        var headers = HTTPHeaders()
        headers.add("Content-Type", ServedContentType.of(meta))
        if let disposition = meta.contentDisposition { headers.add("Content-Disposition", disposition) }
        ObjectHeaders.addRepresentation(meta, decompressed: content.decompressed, to: &headers)
        return content.httpResponse(headers: headers, record: matched.record)
    }

    private func write(_ object: ObjectPath, _ caller: Caller, _ matched: MatchedRequest) async throws -> HTTPResponse {
        let request = matched.request
        let upload = UploadRequest(
            object: object, attributes: try Self.attributes(request.headers),
            possibleSizes: request.body.expectedLength.map { [$0] } ?? [], expectedMD5: request.headers["Content-MD5"],
            mintDownloadToken: false)
        let meta = try await service.upload(upload, body: request.body, caller: caller, matched.context)
        var headers = HTTPHeaders()
        ObjectHeaders.addRepresentation(meta, decompressed: false, to: &headers)
        headers.remove("Content-Length")
        headers.remove("Content-Type")
        return HTTPResponse(status: 200, headers: headers, body: .empty)
    }

    /// The XML API's resumable start: `POST` with `x-goog-resumable: start` (signed, so the signature covers it)
    /// → `201 Created` with the session URI in `Location`. The session is the JSON API's (a sealed ticket bound to
    /// the signer's grant): `PUT` chunks with `Content-Range` → 308 with `Range`, the last one 200 — the same
    /// exchange as the XML API's, without credentials.
    private func startResumable(_ object: ObjectPath, _ caller: Caller, _ matched: MatchedRequest) async throws
        -> HTTPResponse
    {
        let request = matched.request
        guard request.headers["x-goog-resumable"]?.bytesEqualIgnoringASCIICase("start") == true else {
            throw ServiceError.badRequest("A POST to a signed URL starts a resumable upload: x-goog-resumable: start.")
        }
        let uploadID = try await service.startResumable(
            UploadRequest(object: object, attributes: try Self.attributes(request.headers), mintDownloadToken: false),
            declaredSize: nil,
            caller: caller, matched.context)
        let location =
            PublicBaseURL.resolve(configured: publicURL, headers: request.headers) + "/upload/storage/v1/b/"
            + PercentEncoding.uriComponent.encode(object.bucket) + "/o?uploadType=resumable&name="
            + PercentEncoding.uriComponent.encode(object.name) + "&upload_id=" + uploadID
        var headers = HTTPHeaders()
        headers.add("Location", location)
        headers.add("X-GUploader-UploadID", uploadID)
        return HTTPResponse(status: 201, headers: headers, body: .empty)
    }

    /// What an XML API upload's headers say about the object: its representation headers, `x-goog-custom-time`,
    /// `x-goog-storage-class` and `x-goog-meta-*` custom metadata (each value checked as a header-safe string, as
    /// on the JSON API).
    static func attributes(_ headers: HTTPHeaders) throws(ServiceError) -> ObjectAttributes {
        var attributes = ObjectAttributes()
        let type = headers["Content-Type"] ?? "application/octet-stream"
        try ObjectResourceJSON.checkHeaderSafe(type, "Content-Type")
        attributes.contentType = type
        for (name, keyPath) in [
            ("Content-Disposition", \ObjectAttributes.contentDisposition),
            ("Content-Encoding", \ObjectAttributes.contentEncoding),
            ("Content-Language", \ObjectAttributes.contentLanguage),
            ("Cache-Control", \ObjectAttributes.cacheControl),
        ] {
            guard let value = headers[name] else { continue }
            try ObjectResourceJSON.checkHeaderSafe(value, name)
            attributes[keyPath: keyPath] = value
        }
        attributes.customTime = try ObjectResourceJSON.customTime(headers["x-goog-custom-time"])
        attributes.storageClass = try ObjectResourceJSON.storageClass(headers["x-goog-storage-class"])
        try CustomMetadataHeaders.read(headers, prefix: "x-goog-meta-", into: &attributes)
        return attributes
    }
}
