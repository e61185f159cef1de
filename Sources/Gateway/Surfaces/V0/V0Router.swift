public import HTTPServer
import PortcullisCore
public import Service

/// Turns a raw v0 request into a typed `RoutedRequest` (DESIGN §1), or the protocol error for it.
///
/// Paths (v0 §2.1): `/v0/b/{bucket}/o` (collection) and `/v0/b/{bucket}/o/{object}`. The bucket segment and
/// everything after `/o/` — raw slashes included (§2.2 [REC]) — are percent-decoded exactly once, without
/// turning `+` into a space; query parameters are form-decoded (§2.3). Unknown buckets are 404, methods a
/// route does not serve are 405 with `Allow`.
public struct V0Router: Sendable {
    /// The configured buckets, compared by bytes.
    let buckets: Set<ExactString>

    public static let collectionTemplate = "/v0/b/{bucket}/o"
    public static let objectTemplate = "/v0/b/{bucket}/o/{object}"
    public static let objectMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    public static let collectionMethods = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]

    /// Query parameters v0 reads that must appear at most once (a repeated one is ambiguous → 400).
    public static let singleValuedParameters =
        [
            "name", "alt", "uploadType", "upload_id", "upload_protocol", "pageToken", "maxResults", "prefix",
            "delimiter",
            "token", "signature", "create_token", "delete_token",
        ] + RequestConditions.parameterNames

    public init(buckets: some Sequence<String>) { self.buckets = Set(buckets.map { ExactString($0) }) }

    /// Whether the target is under `/v0/` (or is exactly `/v0`).
    public static func matches(_ request: HTTPRequest) -> Bool {
        let path = request.path.utf8
        return path.elementsEqual("/v0".utf8) || path.starts(with: "/v0/".utf8)
    }

    /// `/v0/b/{bucket}/…` split on bytes (a `/` followed by a combining mark is one `Character`, so Character
    /// operations would not see it): the raw bucket segment and the tail from the `/` after it.
    static func bucketAndTail(_ path: Substring) -> (bucket: Substring, tail: Tail)? {
        guard path.utf8.starts(with: "/v0/b/".utf8) else { return nil }
        let rest = path[path.utf8.index(path.startIndex, offsetBy: 6)...]
        guard let slash = rest.utf8.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let after = rest[slash...]
        let tail: Tail
        if after.bytesEqual("/o") {
            tail = .collection
        } else if after.bytesEqual("/o/") {
            tail = .missingName
        } else if after.utf8.starts(with: "/o/".utf8) {
            tail = .object(after[after.utf8.index(after.startIndex, offsetBy: 3)...])
        } else {
            tail = .unmatched
        }
        return (rest[..<slash], tail)
    }

    /// What follows `/v0/b/{bucket}`.
    enum Tail {
        case collection
        case missingName
        case object(Substring)
        case unmatched
    }

    /// The route template for a path, for labelling even requests that fail routing.
    public static func template(for request: HTTPRequest) -> String {
        switch bucketAndTail(request.path[...])?.tail {
        case .collection?: return collectionTemplate
        case .missingName?, .object?: return objectTemplate
        case .unmatched?, nil: return "/v0/unmatched"
        }
    }

    /// Checks what an OPTIONS request addresses (bucket and object name) without choosing an operation.
    public func validateTarget(_ request: HTTPRequest) throws(ServiceError) {
        guard let (rawBucket, tail) = Self.bucketAndTail(request.path[...]),
            let bucket = PercentEncoding.decode(rawBucket, plusIsSpace: false)
        else { throw .notFound("Not Found.") }
        switch tail {
        case .collection, .object: break
        case .missingName, .unmatched: throw .notFound("Not Found.")
        }
        guard buckets.contains(ExactString(bucket)) else { throw .notFound("Bucket \(bucket) not found.") }
        if case .object(let rawName) = tail {
            guard let name = PercentEncoding.decode(rawName, plusIsSpace: false) else {
                throw .badRequest("Malformed percent-encoding in the object name.")
            }
            _ = try Self.objectPath(bucket, name)
        }
    }

    public func route(_ request: HTTPRequest) throws(ServiceError) -> RoutedRequest {
        // Scanned on UTF-8 (the path is ASCII up to the object name): Character iteration cost several % of
        // a metadata GET.
        guard let (rawBucket, tail) = Self.bucketAndTail(request.path[...]) else { throw .notFound("Not Found.") }
        guard let bucket = PercentEncoding.decode(rawBucket, plusIsSpace: false) else {
            throw .badRequest("Malformed percent-encoding in the bucket name.")
        }
        var rawObject: Substring?
        switch tail {
        case .collection: rawObject = nil
        case .missingName: throw .badRequest("Missing object name after /o/.")
        case .object(let raw): rawObject = raw
        case .unmatched: throw .notFound("Not Found.")
        }
        guard buckets.contains(ExactString(bucket)) else { throw .notFound("Bucket \(bucket) not found.") }
        let query = try QueryParameters(parsing: request.query, singleValued: Self.singleValuedParameters)
        let method = request.method.rawValue
        let isHead = method == "HEAD"

        if let rawObject {
            guard let name = PercentEncoding.decode(rawObject, plusIsSpace: false) else {
                throw .badRequest("Malformed percent-encoding in the object name.")
            }
            let object = try Self.objectPath(bucket, name)
            let op = try objectOperation(method: method, object: object, query: query, headers: request.headers)
            return RoutedRequest(operation: op, query: query, routeTemplate: Self.objectTemplate, isHead: isHead)
        }
        let op = try collectionOperation(method: method, bucket: bucket, query: query, headers: request.headers)
        return RoutedRequest(operation: op, query: query, routeTemplate: Self.collectionTemplate, isHead: isHead)
    }

    static func objectPath(_ bucket: String, _ name: String) throws(ServiceError) -> ObjectPath {
        try StorageService.objectPath(bucket, name)
    }

    private func objectOperation(
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
                HTTPHeaders.equalsIgnoringCase(override.trimmingSpaces(), "PATCH")
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
            throw .methodNotAllowed(allow: Self.objectMethods)
        }
    }

    private func collectionOperation(
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
            throw .methodNotAllowed(allow: Self.collectionMethods)
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

    /// Upload kind from `X-Goog-Upload-Protocol` / `uploadType`, then the body's Content-Type (§5.7–5.9). The
    /// name comes from the path or `?name=` (as in the emulator; the SDKs always send it), never from JSON.
    private func uploadOperation(
        bucket: String, name: String?, query: QueryParameters,
        headers: HTTPHeaders
    ) throws(ServiceError) -> Operation {
        let proto = (headers["X-Goog-Upload-Protocol"] ?? query["uploadType"] ?? "").trimmingSpaces().lowercased()
        if let command = headers["X-Goog-Upload-Command"] {
            let words = command.split(separator: ",").map { $0.trimmingSpaces().lowercased() }
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
