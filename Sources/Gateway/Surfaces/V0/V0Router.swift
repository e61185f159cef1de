public import HTTPServer
import PortcullisCore
public import Service

/// The v0 surface's route table and the decoders that turn a matched request into a typed
/// `RoutedRequest` (docs/architecture.md), or the protocol error for it.
///
/// Paths: `/v0/b/{bucket}/o` (collection) and `/v0/b/{bucket}/o/{object...}`: everything after `/o/`, raw
/// slashes included. The bucket and the object name are percent-decoded exactly once, without
/// turning `+` into a space; query parameters are form-decoded. Whether the bucket exists is the
/// service's to answer, as on every surface.
public struct V0Router: Sendable {
    public static let collectionTemplate = "/v0/b/{bucket}/o"
    public static let objectTemplate = "/v0/b/{bucket}/o/{object}"

    /// Untyped `throws` in the function type (each decoder throws only `ServiceError`): a typed-throws function
    /// type stored in a static table crashes the 6.3 compiler's SIL generation.
    typealias Decoder = @Sendable (HTTPRequest, RouteMatch) throws -> RoutedRequest

    /// The routes: one line each.
    static let table: [Route<Decoder>] = [
        Route([.get, .post, .put, .delete], RouteTemplate(static: "/v0/b/{bucket}/o"), collection),
        Route([.get, .post, .put, .patch, .delete], RouteTemplate(static: "/v0/b/{bucket}/o/{object...}"), object),
    ]

    /// Query parameters v0 reads that must appear at most once (a repeated one is ambiguous → 400).
    public static let singleValuedParameters =
        [
            "name", "alt", "uploadType", "upload_id", "upload_protocol", "pageToken", "maxResults", "prefix",
            "delimiter",
            "token", "signature", "create_token", "delete_token",
        ] + RequestConditions.parameterNames

    private static let compiled = CompiledRoutes(static: table)

    public init() {}

    /// Routes `request` through the v0 table alone, as the gateway's router would (404 for a path no route
    /// matches, 405 for a method none serves): for tests and the fuzz target.
    public func route(_ request: HTTPRequest) throws(ServiceError) -> RoutedRequest {
        switch Self.compiled.resolve(request.method, path: request.path) {
        case .matched(let route, let match): return try Self.decode(request, match, route.handler)
        case .methodNotAllowed(let allow): throw .methodNotAllowed(allow: allow)
        case .notFound: throw .notFound("Not Found.")
        }
    }

    /// The route's decoder, its failure as the `ServiceError` it is.
    static func decode(_ request: HTTPRequest, _ match: RouteMatch, _ decoder: Decoder) throws(ServiceError)
        -> RoutedRequest
    {
        do { return try decoder(request, match) } catch { throw ServiceError(any: error) }
    }

    static func collection(_ request: HTTPRequest, _ match: RouteMatch) throws(ServiceError) -> RoutedRequest {
        let bucket = try bucketName(match)
        let query = try QueryParameters(parsing: request.query, singleValued: singleValuedParameters)
        let op = try collectionOperation(
            method: request.method.rawValue, bucket: bucket, query: query, headers: request.headers)
        return RoutedRequest(operation: op, query: query)
    }

    static func object(_ request: HTTPRequest, _ match: RouteMatch) throws(ServiceError) -> RoutedRequest {
        let bucket = try bucketName(match)
        let rawObject = match.captures[1]
        guard !rawObject.isEmpty else { throw .badRequest("Missing object name after /o/.") }
        let query = try QueryParameters(parsing: request.query, singleValued: singleValuedParameters)
        guard let name = PercentEncoding.decode(rawObject, plusIsSpace: false) else {
            throw .badRequest("Malformed percent-encoding in the object name.")
        }
        let object = try objectPath(bucket, name)
        let op = try objectOperation(
            method: request.method.rawValue, object: object, query: query, headers: request.headers)
        return RoutedRequest(operation: op, query: query)
    }

    /// What a preflight checks (the request itself checks the same, in the service and the decoder): the
    /// bucket is served and the object name, if any, is one the name policy accepts.
    static func check(_ match: RouteMatch, _ service: StorageService) throws(ServiceError) {
        let bucket = try bucketName(match)
        guard service.hasBucket(bucket) else { throw .notFound("Bucket \(bucket) not found.") }
        guard match.captures.count > 1 else { return }
        guard !match.captures[1].isEmpty, let name = PercentEncoding.decode(match.captures[1], plusIsSpace: false)
        else { throw .notFound("Not Found.") }
        _ = try objectPath(bucket, name)
    }

    private static func bucketName(_ match: RouteMatch) throws(ServiceError) -> String {
        guard let bucket = PercentEncoding.decode(match.captures[0], plusIsSpace: false) else {
            throw .badRequest("Malformed percent-encoding in the bucket name.")
        }
        return bucket
    }

    static func objectPath(_ bucket: String, _ name: String) throws(ServiceError) -> ObjectPath {
        try StorageService.objectPath(bucket, name)
    }

    private static func objectOperation(
        method: String, object: ObjectPath, query: QueryParameters,
        headers: HTTPHeaders
    ) throws(ServiceError) -> Operation {
        switch method {
        case "GET", "HEAD":
            switch query["alt"] {
            case nil, "json": return .getMetadata(object)
            case "media": return .download(object)
            case "downloadUrl": return .downloadURL(object)
            case let other?: throw .badRequest("Unsupported alt=\(other); use media, json or downloadUrl.")
            }
        case "PATCH":
            return .updateMetadata(object)
        case "DELETE":
            return .delete(object)
        case "PUT", "POST":
            try Self.validateUploadProtocol(headers)
            if let uploadID = query["upload_id"], !uploadID.isEmpty {
                return .resumableContinue(bucket: object.bucket, uploadID: uploadID)
            }
            if method == "PUT", let override = headers["X-HTTP-Method-Override"],
                override.trimmingSpaces().bytesEqualIgnoringASCIICase("PATCH")
            {
                return .updateMetadata(object)
            }
            if let value = query["create_token"] {
                guard value == "true" else { throw .badRequest("create_token must be \"true\".") }
                return .createToken(object)
            }
            if let token = query["delete_token"] { return .deleteToken(object, token: token) }
            if method == "POST", query.contains("signedUrl") { return .signURL(object) }
            if method == "PUT" {
                throw .badRequest("PUT on an object needs X-HTTP-Method-Override: PATCH, create_token or delete_token.")
            }
            return try uploadOperation(bucket: object.bucket, name: object.name, query: query, headers: headers)
        default:
            throw .methodNotAllowed(allow: table[1].allowed)
        }
    }

    private static func collectionOperation(
        method: String, bucket: String, query: QueryParameters,
        headers: HTTPHeaders
    ) throws(ServiceError) -> Operation {
        switch method {
        case "GET", "HEAD":
            return .list(bucket: bucket)
        case "POST", "PUT":
            try Self.validateUploadProtocol(headers)
            if let uploadID = query["upload_id"], !uploadID.isEmpty {
                return .resumableContinue(bucket: bucket, uploadID: uploadID)
            }
            if method == "PUT" { throw .badRequest("Missing upload_id.") }
            return try uploadOperation(bucket: bucket, name: query["name"], query: query, headers: headers)
        case "DELETE":
            guard let name = query["name"] else { throw .badRequest("Missing object name (?name=).") }
            return .delete(try Self.objectPath(bucket, name))
        default:
            throw .methodNotAllowed(allow: table[0].allowed)
        }
    }

    /// An `X-Goog-Upload-Protocol` header, when present, must name a protocol we speak — on every POST/PUT, not
    /// only uploads, so a malformed request is refused rather than silently treated as another operation.
    private static func validateUploadProtocol(_ headers: HTTPHeaders) throws(ServiceError) {
        guard let value = headers["X-Goog-Upload-Protocol"] else { return }
        let proto = value.trimmingSpaces().lowercased()
        guard ["", "resumable", "multipart", "media", "raw"].contains(proto) else {
            throw .badRequest("Unsupported X-Goog-Upload-Protocol \(value).")
        }
    }

    /// Upload kind from `X-Goog-Upload-Protocol` / `uploadType`, then the body's Content-Type. The
    /// name comes from the path or `?name=` (as in the emulator; the SDKs always send it), never from JSON.
    private static func uploadOperation(
        bucket: String, name: String?, query: QueryParameters,
        headers: HTTPHeaders
    ) throws(ServiceError) -> Operation {
        let proto = (headers["X-Goog-Upload-Protocol"] ?? query["uploadType"] ?? "").trimmingSpaces().lowercased()
        if let command = headers["X-Goog-Upload-Command"] {
            let words = command.bytesSplit(separator: UInt8(ascii: ",")).map { $0.trimmingSpaces().lowercased() }
            guard !words.isEmpty, words.allSatisfy({ ["start", "upload", "finalize", "query", "cancel"].contains($0) })
            else {
                throw .badRequest("Unsupported X-Goog-Upload-Command \(command).")
            }
        }
        let contentType = headers["Content-Type"] ?? ""
        switch proto {
        case "resumable":
            // `start` (or no command) begins an upload; any other command needs the upload URL's upload_id.
            let command = (headers["X-Goog-Upload-Command"] ?? "start").trimmingSpaces().lowercased()
            guard command == "start" else { throw .notFound("Unknown upload: the request has no upload_id.") }
            guard let name else { throw .badRequest("Missing object name (?name=).") }
            _ = try Self.objectPath(bucket, name)
            return .resumableStart(bucket: bucket, name: name)
        case "multipart":
            guard let boundary = MultipartReader.boundary(contentType: contentType) else {
                throw ServiceError.badRequest(MultipartError.badContentType(contentType).description)
            }
            guard let name else { throw .badRequest("Missing object name (?name=).") }
            _ = try Self.objectPath(bucket, name)
            return .uploadMultipart(bucket: bucket, name: name, boundary: boundary)
        case "", "media", "raw":
            if proto.isEmpty, let boundary = MultipartReader.boundary(contentType: contentType) {
                guard let name else { throw .badRequest("Missing object name (?name=).") }
                _ = try Self.objectPath(bucket, name)
                return .uploadMultipart(bucket: bucket, name: name, boundary: boundary)
            }
            guard let name else { throw .badRequest("Missing object name (?name=).") }
            return .uploadMedia(try Self.objectPath(bucket, name))
        default:
            throw .badRequest("Unsupported upload protocol \(proto).")
        }
    }
}
