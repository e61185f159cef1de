import CloudStorageWire
import HTTPServer
public import PortcullisCore
public import Service

/// The Cloud Storage JSON API surface (README.md, "Server-side code"; openapi/gcs-json.yaml): what Google's Cloud Storage
/// libraries and the Firebase Admin SDKs send with `STORAGE_EMULATOR_HOST`, as a codec over the same
/// `StorageService` — and so the same buckets, objects, generations, download tokens and access decisions — as v0.
///
/// It routes (`JSONRouter`), decodes query parameters, headers and resource JSON into typed service calls, and
/// encodes what they return as GCS resources (`JSONResources`), byte streams with GCS's media headers, and
/// failures in GCS's error shape. It decides nothing about access, existence or preconditions.
public final class JSONAPI: APISurface {
    let service: StorageService
    let configuration: JSONAPIConfiguration
    let logger: Logger
    public let traits = SurfaceTraits(
        errorShape: JSONErrorShape(), prefixes: JSONRouter.prefixes, notFoundMessage: "Not Found",
        corsRequestHeaders: JSONAPI.corsRequestHeaders, corsExposedHeaders: JSONAPI.corsExposedHeaders,
        loggableQueryKeys: AccessLog.storageQueryKeys + [
            "projection", "fields", "prettyPrint", "startOffset", "endOffset", "includeTrailingDelimiter",
            "sourceGeneration", "ifSourceGenerationMatch", "ifSourceMetagenerationMatch", "versions",
        ])

    /// What Google's browser-capable clients send: the resumable protocol's `Content-Range` and `X-Upload-*`,
    /// hashes, preconditions, and Google's client headers.
    static let corsRequestHeaders = [
        "Authorization", "Content-Type", "Content-Range", "Range", "If-Match", "If-None-Match", "If-Modified-Since",
        "If-Unmodified-Since", "If-Range", "X-Upload-Content-Type", "X-Upload-Content-Length", "X-Goog-Hash",
        "X-Goog-Api-Client", "X-Goog-User-Project", "X-GUploader-No-308", "X-HTTP-Method-Override", "X-Request-Id",
        "traceparent",
    ]
    /// What such a client reads: the session URI (`Location`), what a chunk persisted (`Range`), validators and
    /// GCS's object facts.
    static let corsExposedHeaders = [
        "Content-Type", "Content-Length", "Content-Range", "Content-Disposition", "Content-Encoding", "ETag",
        "Last-Modified", "Accept-Ranges", "Cache-Control", "Retry-After", "Location", "Range", "Warning",
        "X-Request-Id", "X-GUploader-UploadID", "X-HTTP-Status-Code-Override", "x-goog-hash", "x-goog-generation",
        "x-goog-metageneration", "x-goog-storage-class", "x-goog-stored-content-encoding",
        "x-goog-stored-content-length",
    ]

    public init(
        service: StorageService, configuration: JSONAPIConfiguration = JSONAPIConfiguration(),
        logger: Logger
    ) {
        self.service = service
        self.configuration = configuration
        self.logger = logger
    }

    /// The JSON API table (`JSONRouter.table`), each route decoding into a `JSONOperation` and performing it.
    public var routes: [Route<RouteHandler>] {
        JSONRouter.table.map { route in
            let decode = route.handler
            return Route(route.methods, route.template) { [self] matched in
                await serve(matched, decode)
            }
        }
    }

    private func serve(_ matched: MatchedRequest, _ decode: JSONRouter.Decoder) async -> HTTPResponse {
        let record = matched.record
        do {
            let (operation, query) = try JSONRouter.decode(matched.request, matched.match, decode)
            record.bucket = operation.bucket
            record.objectName = operation.objectName
            try Self.checkStandardParameters(query)
            let call = JSONCall(
                request: matched.request, operation: operation, query: query, principal: matched.principal,
                record: record, context: record.serviceContext, fields: try Self.fieldMask(query["fields"]))
            return try await perform(call)
        } catch {
            return failureResponse(for: error, record: record, logger: logger)
        }
    }

    /// Google's standard parameters every call accepts: `prettyPrint` (a boolean; responses are always
    /// compact), `projection` (`full` or `noAcl`; `full` adds `owner`, no ACLs are kept), `userProject`
    /// and `alt` (checked by the router). Invalid values are 400, as on GCS.
    static func checkStandardParameters(_ query: QueryParameters) throws(ServiceError) {
        if let value = query["prettyPrint"], !["true", "false"].contains(value.lowercased()) {
            throw .badRequest("Invalid value for prettyPrint: \(value).")
        }
        if let value = query["projection"], !["full", "noacl"].contains(value.lowercased()) {
            throw .badRequest("Invalid value for projection: \(value).")
        }
    }

    /// `fields=` as a mask (nil: every member); a value that is not one is 400.
    static func fieldMask(_ text: String?) throws(ServiceError) -> FieldMask? {
        do {
            return try FieldMask.parse(text)
        } catch {
            throw .badRequest(error.message)
        }
    }

    private func perform(_ call: JSONCall) async throws -> HTTPResponse {
        switch call.operation {
        case .listBuckets: return try listBuckets(call)
        case .getBucket(let name): return try getBucket(call, name)
        case .insertBucket: return try await insertBucket(call)
        case .changeBucket(let name, let replace): return try await changeBucket(call, name, replace: replace)
        case .deleteBucket(let name): return try await deleteBucket(call, name)
        case .listObjects(let bucket): return try await list(call, bucket: bucket)
        case .getMetadata(let object): return try await getMetadata(call, object)
        case .download(let object): return try await download(call, object)
        case .patch(let object): return try await patch(call, object)
        case .update(let object): return try await update(call, object)
        case .delete(let object): return try await delete(call, object)
        case .upload(let bucket, let kind): return try await upload(call, bucket: bucket, kind: kind)
        case .resumable(let bucket, let uploadID): return try await resumable(call, bucket: bucket, uploadID: uploadID)
        case .copy(let source, let destination, let rewrite):
            return try await copy(call, from: source, to: destination, rewrite: rewrite)
        case .compose(let destination): return try await compose(call, destination)
        case .move(let source, let destination): return try await move(call, from: source, to: destination)
        }
    }
}

/// The JSON API surface's own settings (docs/configuration.md). Built by the executable.
public struct JSONAPIConfiguration: Sendable {
    /// External base URL (`--public-url`) for session URIs and links; nil → `http://{Host header}`.
    public var publicURL: String?

    public init(publicURL: String? = nil) { self.publicURL = publicURL }
}

/// One request in flight.
struct JSONCall: Sendable {
    let request: HTTPRequest
    let operation: JSONOperation
    let query: QueryParameters
    let principal: Principal?
    /// The access-log record; the surface writes what the wire named.
    let record: AccessRecord
    /// What the service is handed (`record.serviceContext`, made once).
    let context: RequestContext
    /// `fields=`: which members of the response resource to write (nil: all).
    let fields: FieldMask?

    var headers: HTTPHeaders { request.headers }

    /// The JSON API takes no capabilities in the query: the caller is who authenticated.
    var caller: Caller { Caller(principal: principal) }

    /// `projection=full`: the resource carries `owner` (no other part of the ACL model is kept).
    var fullProjection: Bool {
        guard let value = query["projection"] else { return false }
        return value.utf8.elementsEqual("full".utf8, by: { $0 | 0x20 == $1 })
    }
}
