public import HTTPServer
import PortcullisCore
public import Service

/// Turns a raw JSON API request into a `JSONOperation` and its route template (DESIGN §1).
///
/// Paths: `/storage/v1/b[/{bucket}[/o[/{object}[/compose | /copyTo|rewriteTo/b/{bucket}/o/{object}]]]]`,
/// `/download/storage/v1/b/{bucket}/o/{object}`, `/upload/storage/v1/b/{bucket}/o`. Segments are
/// percent-decoded exactly once (`+` stays a plus). Google's clients encode `/` in object names as `%2F`; a
/// name sent with raw slashes is taken whole on GET, PATCH, PUT and DELETE (only POST has sub-resources).
/// Bucket existence is the service's to answer.
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
    public static let downloadTemplate = "/download/storage/v1/b/{bucket}/o/{object}"
    public static let uploadTemplate = "/upload/storage/v1/b/{bucket}/o"
    static let unmatched = "/storage/v1/unmatched"

    /// Query parameters that must appear at most once (a repeated one is ambiguous → 400).
    public static let singleValuedParameters =
        [
            "alt", "uploadType", "upload_id", "name", "pageToken", "maxResults", "prefix", "delimiter", "startOffset",
            "endOffset", "includeTrailingDelimiter", "matchGlob", "fields", "projection", "prettyPrint", "userProject",
            "generation", "sourceGeneration", "destinationPredefinedAcl", "predefinedAcl", "versions", "project",
            "ifSourceGenerationMatch", "ifSourceGenerationNotMatch", "ifSourceMetagenerationMatch",
            "ifSourceMetagenerationNotMatch", "rewriteToken", "maxBytesRewrittenPerCall", "kmsKeyName",
            "destinationKmsKeyName",
        ] + RequestConditions.parameterNames

    private static let roots = ["/storage/v1", "/download/storage/v1", "/upload/storage/v1"]

    public init() {}

    public static func matches(_ request: HTTPRequest) -> Bool {
        let path = request.path.utf8
        return roots.contains { root in
            path.elementsEqual(root.utf8)
                || (path.starts(with: root.utf8) && path.dropFirst(root.utf8.count).first == UInt8(ascii: "/"))
        }
    }

    private static let rootsWithBuckets: [(Root, String)] = [
        (.storage, "/storage/v1/b"), (.download, "/download/storage/v1/b"), (.upload, "/upload/storage/v1/b"),
    ]

    /// Raw (still encoded) path segments after `/b/`, and which root the path is under. Split on `/` bytes:
    /// `Substring.split` compares `Character`s, which cost ~4 % of a metadata GET.
    private static func split(_ path: Substring) -> (root: Root, segments: [Substring])? {
        for (root, text) in rootsWithBuckets {
            if path.bytesEqual(text) { return (root, []) }
            let utf8 = path.utf8
            guard path.bytesHasPrefix(text), utf8.dropFirst(text.utf8.count).first == UInt8(ascii: "/") else {
                continue
            }
            var segments: [Substring] = []
            var start = utf8.index(utf8.startIndex, offsetBy: text.utf8.count + 1)
            var i = start
            while i != utf8.endIndex {
                if utf8[i] == UInt8(ascii: "/") {
                    segments.append(path[start..<i])
                    start = utf8.index(after: i)
                }
                i = utf8.index(after: i)
            }
            segments.append(path[start..<utf8.endIndex])
            return (root, segments)
        }
        return nil
    }

    private enum Root { case storage, download, upload }

    /// The route template for labelling, even for requests that fail routing.
    public static func template(for request: HTTPRequest) -> String {
        guard let (root, segments) = split(request.path) else { return unmatched }
        return template(root, segments, method: request.method)
    }

    private static func template(_ root: Root, _ s: [Substring], method: HTTPMethod) -> String {
        switch root {
        case .download: return s.count >= 3 && s[1] == "o" ? downloadTemplate : unmatched
        case .upload: return s.count == 2 && s[1] == "o" ? uploadTemplate : unmatched
        case .storage:
            switch s.count {
            case 0: return bucketsTemplate
            case 1: return bucketTemplate
            case 2: return s[1] == "o" ? objectsTemplate : unmatched
            default:
                guard s[1] == "o" else { return unmatched }
                // Only POST (and its preflight) has sub-resources; other methods take a raw-slash name whole.
                let subResources = method == .post || method == .options
                if subResources, s.count == 4, s[3] == "compose" { return composeTemplate }
                if subResources, s.count == 8, s[4] == "b", s[6] == "o" {
                    if s[3] == "copyTo" { return copyTemplate }
                    if s[3] == "rewriteTo" { return rewriteTemplate }
                }
                return objectTemplate
            }
        }
    }

    /// The methods a route serves (OPTIONS, CORS preflights, 405).
    public static func methods(for template: String) -> [String] {
        switch template {
        case objectTemplate: ["GET", "HEAD", "PATCH", "PUT", "DELETE", "OPTIONS"]
        case uploadTemplate: ["POST", "PUT", "DELETE", "OPTIONS"]
        case composeTemplate, copyTemplate, rewriteTemplate: ["POST", "OPTIONS"]
        default: ["GET", "HEAD", "OPTIONS"]
        }
    }

    public func route(_ request: HTTPRequest) throws(ServiceError) -> (JSONOperation, QueryParameters) {
        let path = request.path
        guard let (root, s) = Self.split(path) else { throw .notFound("Not Found") }
        let query = try QueryParameters(parsing: request.query, singleValued: Self.singleValuedParameters)
        let method = request.method.rawValue
        let template = Self.template(root, s, method: request.method)
        guard template != Self.unmatched else { throw .notFound("Not Found") }
        func notAllowed() -> ServiceError { .methodNotAllowed(allow: Self.methods(for: template)) }
        func read() -> Bool { method == "GET" || method == "HEAD" }

        if root == .storage, s.isEmpty {
            guard read() else { throw notAllowed() }
            return (.listBuckets, query)
        }
        let bucket = try Self.decode(s[0], "bucket name")
        guard !bucket.isEmpty else { throw .notFound("Not Found") }
        switch template {
        case Self.bucketTemplate:
            guard read() else { throw notAllowed() }
            return (.getBucket(bucket), query)
        case Self.objectsTemplate:
            guard read() else { throw notAllowed() }
            return (.listObjects(bucket: bucket), query)
        case Self.uploadTemplate:
            if let uploadID = query["upload_id"] {
                guard ["PUT", "POST", "DELETE"].contains(method) else { throw notAllowed() }
                return (.resumable(bucket: bucket, uploadID: uploadID), query)
            }
            guard method == "POST" else { throw notAllowed() }
            let type = query["uploadType"] ?? (request.headers["X-Upload-Content-Type"] != nil ? "resumable" : "media")
            guard let kind = JSONOperation.UploadKind(rawValue: type) else {
                throw .badRequest("Unsupported uploadType \(type); use media, multipart or resumable.")
            }
            return (.upload(bucket: bucket, kind: kind), query)
        case Self.composeTemplate:
            return (.compose(try Self.object(bucket, s[2])), query)
        case Self.copyTemplate, Self.rewriteTemplate:
            let destinationBucket = try Self.decode(s[5], "bucket name")
            let destination = try Self.object(destinationBucket, s[7])
            return (
                .copy(
                    source: try Self.object(bucket, s[2]), destination: destination,
                    rewrite: template == Self.rewriteTemplate), query
            )
        default:
            // `/o/` + the object: one encoded segment, or (raw slashes) everything after `/o/`.
            let object = try Self.object(bucket, path[s[2].startIndex...])
            if root == .download {
                guard read() else { throw notAllowed() }
                if let alt = query["alt"], alt != "media" {
                    throw .badRequest("Unsupported alt=\(alt); downloads are alt=media.")
                }
                return (.download(object), query)
            }
            switch method {
            case "GET", "HEAD":
                switch query["alt"] {
                case nil, "json": return (.getMetadata(object), query)
                case "media": return (.download(object), query)
                case let other?: throw .badRequest("Unsupported alt=\(other); use json or media.")
                }
            case "PATCH": return (.patch(object), query)
            case "PUT": return (.update(object), query)
            case "DELETE": return (.delete(object), query)
            default: throw notAllowed()
            }
        }
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
