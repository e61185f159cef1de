public import HTTPServer
import PortcullisCore
public import Service

/// The Cloud Storage JSON API's route table and the decoders that turn a matched request into a
/// `JSONOperation` (docs/architecture.md).
///
/// Paths: `/storage/v1/b[/{bucket}[/o[/{object...}]]]`, the POST sub-resources `…/o/{object}/compose` and
/// `…/o/{object}/copyTo|rewriteTo/b/{bucket}/o/{object}`, `…/o/{object}/moveTo/o/{object}`, `/download/storage/v1/b/{bucket}/o/{object...}` and
/// `/upload/storage/v1/b/{bucket}/o` (also under `/resumable`, as GCS serves it). Segments are percent-decoded exactly once (`+` stays a plus). Google's
/// clients encode `/` in object names as `%2F`; a name sent with raw slashes is taken whole on GET, PATCH, PUT
/// and DELETE (only POST has sub-resources: the router prefers the more specific route only where it serves the
/// method). Bucket existence is the service's to answer.
public struct JSONRouter: Sendable {
    public static let bucketsTemplate = "/storage/v1/b"
    public static let bucketTemplate = "/storage/v1/b/{bucket}"
    public static let objectsTemplate = "/storage/v1/b/{bucket}/o"
    public static let objectTemplate = "/storage/v1/b/{bucket}/o/{object}"
    public static let composeTemplate = "/storage/v1/b/{bucket}/o/{object}/compose"
    public static let copyTemplate =
        "/storage/v1/b/{bucket}/o/{object}/copyTo/b/{destinationBucket}/o/{destinationObject}"
    public static let rewriteTemplate =
        "/storage/v1/b/{bucket}/o/{object}/rewriteTo/b/{destinationBucket}/o/{destinationObject}"
    public static let moveTemplate = "/storage/v1/b/{bucket}/o/{object}/moveTo/o/{destinationObject}"
    public static let downloadTemplate = "/download/storage/v1/b/{bucket}/o/{object}"
    public static let uploadTemplate = "/upload/storage/v1/b/{bucket}/o"
    /// Where google-apitools (gsutil) starts resumable uploads: an alias GCS serves for the upload path.
    public static let resumableUploadTemplate = "/resumable/upload/storage/v1/b/{bucket}/o"

    /// Where the surface answers unmatched paths (GCS's error shape, "Not Found").
    public static let prefixes = [
        "/storage/v1", "/download/storage/v1", "/upload/storage/v1", "/resumable/upload/storage/v1",
    ]

    /// Untyped `throws` in the function type (each decoder throws only `ServiceError`): a typed-throws function
    /// type stored in a static table crashes the 6.3 compiler's SIL generation.
    typealias Decoder = @Sendable (HTTPRequest, RouteMatch, QueryParameters) throws -> JSONOperation

    /// The routes: one line each; then what is not served, answering 501 (`JSONUnserved`).
    static let table: [Route<Decoder>] = served + JSONUnserved.routes

    private static let served: [Route<Decoder>] = [
        Route([.get, .post], RouteTemplate(static: bucketsTemplate), buckets),
        Route([.get, .patch, .put, .delete], RouteTemplate(static: bucketTemplate), bucket),
        Route([.get], RouteTemplate(static: objectsTemplate), listObjects),
        Route([.get, .patch, .put, .delete], RouteTemplate(static: "/storage/v1/b/{bucket}/o/{object...}"), object),
        Route([.post], RouteTemplate(static: composeTemplate), compose),
        Route([.post], RouteTemplate(static: copyTemplate), copy),
        Route([.post], RouteTemplate(static: rewriteTemplate), rewrite),
        Route([.post], RouteTemplate(static: moveTemplate), move),
        Route([.get], RouteTemplate(static: "/download/storage/v1/b/{bucket}/o/{object...}"), download),
        Route([.post, .put, .delete], RouteTemplate(static: uploadTemplate), upload),
        Route([.post, .put, .delete], RouteTemplate(static: resumableUploadTemplate), upload),
    ]

    /// Query parameters that must appear at most once (a repeated one is ambiguous → 400).
    public static let singleValuedParameters =
        [
            "alt", "uploadType", "upload_id", "name", "pageToken", "maxResults", "prefix", "delimiter", "startOffset",
            "endOffset", "includeTrailingDelimiter", "matchGlob", "fields", "projection", "prettyPrint", "userProject",
            "generation", "sourceGeneration", "destinationPredefinedAcl", "predefinedAcl", "versions", "project",
            "ifSourceGenerationMatch", "ifSourceGenerationNotMatch", "ifSourceMetagenerationMatch",
            "ifSourceMetagenerationNotMatch", "rewriteToken", "maxBytesRewrittenPerCall", "kmsKeyName",
            "destinationKmsKeyName", "destinationStorageClass",
        ] + RequestConditions.parameterNames

    private static let compiled = CompiledRoutes(static: table)

    public init() {}

    /// Routes `request` through the JSON API table alone, as the gateway's router would (404 for a path no
    /// route matches, 405 for a method none serves): for tests and the fuzz target.
    public func route(_ request: HTTPRequest) throws(ServiceError) -> (JSONOperation, QueryParameters) {
        switch Self.compiled.resolve(request.method, path: request.path) {
        case .matched(let route, let match): return try Self.decode(request, match, route.handler)
        case .methodNotAllowed(let allow): throw .methodNotAllowed(allow: allow)
        case .notFound: throw .notFound("Not Found")
        }
    }

    /// The query, then the route's decoder.
    static func decode(_ request: HTTPRequest, _ match: RouteMatch, _ decoder: Decoder) throws(ServiceError)
        -> (JSONOperation, QueryParameters)
    {
        let query = try QueryParameters(parsing: request.query, singleValued: singleValuedParameters)
        do { return (try decoder(request, match, query), query) } catch { throw ServiceError(any: error) }
    }

    private static func bucket(_ match: RouteMatch) throws(ServiceError) -> String {
        let bucket = try decode(match.captures[0], "bucket name")
        guard !bucket.isEmpty else { throw .notFound("Not Found") }
        return bucket
    }

    private static func buckets(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    { request.method == .post ? .insertBucket : .listBuckets }

    private static func bucket(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    {
        let name = try bucket(match)
        switch request.method {
        case .patch: return .changeBucket(name, replace: false)
        case .put: return .changeBucket(name, replace: true)
        case .delete: return .deleteBucket(name)
        default: return .getBucket(name)
        }
    }

    private static func listObjects(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    { .listObjects(bucket: try bucket(match)) }

    private static func compose(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    { .compose(try object(try bucket(match), match.captures[1])) }

    private static func copy(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    { try copy(match, rewrite: false) }

    private static func rewrite(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    { try copy(match, rewrite: true) }

    private static func move(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    {
        let bucket = try bucket(match)
        return .move(source: try object(bucket, match.captures[1]), destination: try object(bucket, match.captures[2]))
    }

    private static func object(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    {
        let object = try Self.object(try bucket(match), match.captures[1])
        switch request.method {
        case .get, .head:
            switch query["alt"] {
            case nil, "json": return .getMetadata(object)
            case "media": return .download(object)
            case let other?: throw .badRequest("Unsupported alt=\(other); use json or media.")
            }
        case .patch: return .patch(object)
        case .put: return .update(object)
        default: return .delete(object)
        }
    }

    private static func download(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    {
        let object = try Self.object(try bucket(match), match.captures[1])
        if let alt = query["alt"], alt != "media" {
            throw .badRequest("Unsupported alt=\(alt); downloads are alt=media.")
        }
        return .download(object)
    }

    private static func copy(_ match: RouteMatch, rewrite: Bool) throws(ServiceError) -> JSONOperation {
        let source = try Self.object(try bucket(match), match.captures[1])
        let destinationBucket = try decode(match.captures[2], "bucket name")
        let destination = try Self.object(destinationBucket, match.captures[3])
        return .copy(source: source, destination: destination, rewrite: rewrite)
    }

    private static func upload(_ request: HTTPRequest, _ match: RouteMatch, _ query: QueryParameters)
        throws(ServiceError) -> JSONOperation
    {
        let bucket = try bucket(match)
        if let uploadID = query["upload_id"] { return .resumable(bucket: bucket, uploadID: uploadID) }
        guard request.method == .post else { throw .methodNotAllowed(allow: ["POST", "PUT", "DELETE", "OPTIONS"]) }
        let type = query["uploadType"] ?? (request.headers["X-Upload-Content-Type"] != nil ? "resumable" : "media")
        guard let kind = JSONOperation.UploadKind(rawValue: type) else {
            throw .badRequest("Unsupported uploadType \(type); use media, multipart or resumable.")
        }
        return .upload(bucket: bucket, kind: kind)
    }

    static func decode(_ segment: Substring, _ what: String) throws(ServiceError) -> String {
        guard let text = PercentEncoding.decode(segment, plusIsSpace: false) else {
            throw .badRequest("Malformed percent-encoding in the \(what).")
        }
        return text
    }

    static func object(_ bucket: String, _ segment: Substring) throws(ServiceError) -> ObjectPath {
        try StorageService.objectPath(bucket, try decode(segment, "object name"))
    }
}
