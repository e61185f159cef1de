import Crypto
public import HTTPServer
public import PortcullisCore
public import Service

/// What the S3 surface is configured with (`--s3-domain`, `--s3-region`).
public struct S3Configuration: Sendable {
    /// With a domain, `BUCKET.DOMAIN` hosts address buckets virtual-host style; path style always works.
    public var domain: String?
    /// What GetBucketLocation answers. Signatures are accepted for any region in their credential scope.
    public var region: String

    public init(domain: String? = nil, region: String = "us-east-1") {
        self.domain = domain
        self.region = region
    }
}

/// The S3 API (docs/s3-api.md): a codec between S3's REST wire format — SigV4-signed, path-style or
/// virtual-host style — and the `StorageService`, served at the root of its own listener (`--s3-listen`).
///
/// It authenticates each request itself (SigV4 in the header or a presigned query, against `--s3-keys` or a
/// user's JWT as the session token), decodes the operation, and encodes results and failures in S3's XML. It
/// decides nothing about access, existence or preconditions: the service does, with the rules, as for every
/// surface. Routes are labelled `s3:/{bucket}/{key}`, `s3:/{bucket}` and `s3:/` (`SurfaceTraits.labelPrefix`),
/// so metrics, access-log lines and traces say which surface served them.
public struct S3Surface: APISurface {
    let service: StorageService
    let keys: S3AccessKeyStore
    /// Signing keys derived so far (one per access key and day).
    let signingKeys = S3SigningKeys()
    /// Presigned requests already verified, by every byte the verification read.
    let verifiedRequests = S3VerifiedRequests()
    /// Verifies a session token (a user's JWT) as the other surfaces verify a bearer token.
    let sessions: any RequestAuthenticating
    let configuration: S3Configuration
    let logger: Logger
    let clock: @Sendable () -> Timestamp

    public let traits = SurfaceTraits(
        errorShape: S3ErrorShape(), notFoundMessage: "Not Found.",
        corsRequestHeaders: [
            "Authorization", "Content-Type", "Content-MD5", "Range", "X-Amz-Date", "X-Amz-Content-Sha256",
            "X-Amz-Security-Token", "X-Amz-User-Agent", "X-Request-Id", "x-amz-copy-source", "x-amz-metadata-directive",
        ],
        corsExposedHeaders: ["ETag", "Content-Length", "Content-Type", "x-amz-request-id", "X-Request-Id"],
        loggableQueryKeys: [
            "list-type", "prefix", "delimiter", "max-keys", "start-after", "encoding-type", "uploadId", "partNumber",
            "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Algorithm",
        ], labelPrefix: "s3:")

    public init(
        service: StorageService, keys: S3AccessKeyStore, sessions: any RequestAuthenticating,
        configuration: S3Configuration, logger: Logger, clock: @escaping @Sendable () -> Timestamp = { .now() }
    ) {
        self.service = service
        self.keys = keys
        self.sessions = sessions
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
    }

    static let methods: [HTTPMethod] = [.get, .head, .put, .post, .delete]

    public var routes: [Route<RouteHandler>] {
        ["/", "/{bucket}", "/{bucket}/{key...}"].map { template in
            Route(Self.methods, RouteTemplate(static: template)) { [self] in await serve($0) }
        }
    }

    /// One S3 request end to end. Never throws.
    func serve(_ matched: MatchedRequest) async -> HTTPResponse {
        let record = matched.record
        let verdict = S3BodyVerdict()
        do {
            let request = matched.request
            let (query, principal, body) = try await admit(request, verdict: verdict)
            record.principalUID = principal?.uid
            let target = try S3Target(request, domain: configuration.domain)
            let call = S3Call(
                request: request, query: query, body: body, target: target, caller: Caller(principal: principal),
                record: record, context: record.serviceContext, verdict: verdict)
            if let bucket = target.bucket {
                record.bucket = bucket
                guard service.hasBucket(bucket) else { throw S3Error.noSuchBucket(bucket) }
            }
            if let key = target.key { record.objectName = key }
            return try await perform(call)
        } catch let error as S3Error {
            return S3ErrorShape.response(error, requestID: record.requestID)
        } catch let failure as S3AuthFailure {
            return S3ErrorShape.response(S3Error(failure), requestID: record.requestID)
        } catch {
            if let recorded = verdict.recorded { return S3ErrorShape.response(recorded, requestID: record.requestID) }
            return failureResponse(for: error, record: record, logger: logger)
        }
    }

    /// Sub-resources of S3 this gateway does not serve: a request naming one is 501 NotImplemented, never
    /// mistaken for a plain object or bucket operation.
    static let unservedSubresources = [
        "acl", "policy", "policyStatus", "lifecycle", "tagging", "website", "versioning", "versions", "object-lock",
        "retention", "legal-hold", "cors", "encryption", "logging", "notification", "replication", "requestPayment",
        "accelerate", "analytics", "inventory", "metrics", "intelligent-tiering", "ownershipControls",
        "publicAccessBlock", "restore", "select", "torrent", "attributes",
    ]

    /// Sub-resource names are lower-case words: a presigned query's `X-Amz-*` names are passed over at their
    /// first byte rather than compared with each.
    static func isUnservedSubresource(_ name: String) -> Bool {
        guard let first = name.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return unservedSubresources.containsBytes(name)
    }

    private func perform(_ call: S3Call) async throws -> HTTPResponse {
        let method = call.request.method
        if let name = call.query.pairs.first(where: { Self.isUnservedSubresource($0.name) })?.name {
            throw S3Error.notImplemented("The ?\(name) sub-resource")
        }
        guard let bucket = call.target.bucket else {
            guard method == .get || method == .head else { throw S3Error.notImplemented("\(method) on the service") }
            return try listBuckets(call)
        }
        guard let key = call.target.key else {
            switch method {
            case .get where call.query.contains("location"): return try location(call)
            case .get where call.query.contains("uploads"): return try await listUploads(call, bucket)
            case .get where call.query["list-type"]?.bytesEqual("2") == true: return try await listV2(call, bucket)
            case .get: return try await listV1(call, bucket)
            case .head: return try headBucket(call, bucket)
            case .post where call.query.contains("delete"): return try await deleteObjects(call, bucket)
            default: throw S3Error.notImplemented("\(method) on a bucket")
            }
        }
        let object = try StorageService.objectPath(bucket, key)
        if let response = try await multipart(call, object) { return response }
        switch method {
        case .get, .head: return try await getObject(call, object)
        case .put where call.request.headers.contains("x-amz-copy-source"): return try await copyObject(call, object)
        case .put: return try await putObject(call, object)
        case .delete: return try await deleteObject(call, object)
        default: throw S3Error.notImplemented("\(method) on an object")
        }
    }
}

/// One S3 request in flight: what every operation needs.
struct S3Call: Sendable {
    let request: HTTPRequest
    let query: QueryParameters
    /// The body as the signature vouches for it (aws-chunked decoded, digests checked while streaming).
    let body: any ByteStream
    let target: S3Target
    let caller: Caller
    let record: AccessRecord
    let context: RequestContext
    let verdict: S3BodyVerdict
    var headers: HTTPHeaders { request.headers }
}

/// The bucket and key a request addresses: `BUCKET.DOMAIN` virtual-host style (with `--s3-domain`), else the
/// first path segment and the rest, percent-decoded.
struct S3Target: Sendable {
    var bucket: String?
    var key: String?

    init(_ request: HTTPRequest, domain: String?) throws(S3Error) {
        var path = request.path.dropFirst()
        if let domain, let host = request.headers["Host"] {
            // By bytes: `:` or `.` next to a combining or prepended mark is one `Character` with it.
            let name = (host.bytesCut(at: UInt8(ascii: ":"))?.before ?? host).lowercased()
            let suffix = "." + domain.lowercased()
            if name.utf8.count > suffix.utf8.count, name.bytesHasSuffix(suffix) {
                bucket = String(decoding: name.utf8.dropLast(suffix.utf8.count), as: UTF8.self)
                key = try Self.decode(path)
                if key?.isEmpty == true { key = nil }
                return
            }
        }
        guard !path.isEmpty else { return }
        let slash = path.utf8.firstIndex(of: UInt8(ascii: "/"))
        bucket = try Self.decode(path[..<(slash ?? path.endIndex)])
        if let slash {
            path = path[path.utf8.index(after: slash)...]  // a byte: a mark after the `/` belongs to the key
            if !path.isEmpty { key = try Self.decode(path) }
        }
    }

    static func decode(_ text: Substring) throws(S3Error) -> String {
        guard let decoded = PercentEncoding.decode(text, plusIsSpace: false) else {
            throw S3Error(400, "InvalidURI", "Couldn't parse the specified URI.")
        }
        return decoded
    }
}

/// The pipeline's authentication step for a listener whose surface authenticates each request itself (the S3
/// API signs requests; its `Authorization` header is no bearer token): nobody, and the surface decides.
public struct SelfAuthenticatingSurface: RequestAuthenticating {
    public init() {}
    public func authenticate(authorization: String?) async throws(ServiceError) -> Principal? { nil }
}
