internal import PortcullisCore

/// A lazily-read part of the request: fields are looked up on access instead of building maps per request.
enum HostRef: Sendable {
    case request
    case auth
    case token
    /// `resource` (false) or `request.resource` (true).
    case resource(proposed: Bool)
    case metadata(proposed: Bool)

    var name: String {
        switch self {
        case .request: "request"
        case .auth: "request.auth"
        case .token: "request.auth.token"
        case .resource(let p): p ? "request.resource" : "resource"
        case .metadata(let p): p ? "request.resource.metadata" : "resource.metadata"
        }
    }

    /// Fields of `resource` (rules.md §3.2).
    static let resourceFields = [
        "name", "bucket", "generation", "metageneration", "size", "timeCreated", "updated", "md5Hash", "crc32c",
        "etag", "contentDisposition", "contentEncoding", "contentLanguage", "contentType", "metadata",
    ]
    /// `request.resource` omits the fields the server assigns (rules.md §3.3, DOC-COND set).
    static let proposedExcluded: Set<String> = ["generation", "metageneration", "etag", "timeCreated", "updated"]
    static let requestFields = ["auth", "path", "time", "resource", "method", "params"]
}

/// Read access to the request for host values; shared by the evaluator and materialization.
struct HostContext {
    let request: RulesRequest
    let requestPath: [String]

    func field(_ host: HostRef, _ name: String) -> Value? {
        switch host {
        case .request:
            switch name {
            case "auth": return request.auth == nil ? .null : .host(.auth)
            case "path": return .path(requestPath)
            case "time": return .timestamp(Int128(request.time.nanosecondsSinceEpoch))
            case "resource": return request.requestResource == nil ? .null : .host(.resource(proposed: true))
            case "method": return .string(request.method.rawValue)
            case "params": return .map([:])
            default: return nil
            }
        case .auth:
            guard let auth = request.auth else { return nil }
            switch name {
            case "uid": return .string(auth.uid)
            case "token": return .host(.token)
            default: return nil
            }
        case .token:
            return request.auth?.claims[name].map(HostContext.value(fromJSON:))
        case .resource(let proposed):
            guard let m = proposed ? request.requestResource : request.resource else { return nil }
            if proposed, HostRef.proposedExcluded.contains(name) { return nil }
            switch name {
            case "name": return .string(m.name)
            case "bucket": return .string(m.bucket)
            case "generation": return .int(m.generation)
            case "metageneration": return .int(m.metageneration)
            case "size": return .int(m.size)
            case "timeCreated": return .timestamp(Int128(m.timeCreated.nanosecondsSinceEpoch))
            case "updated": return .timestamp(Int128(m.updated.nanosecondsSinceEpoch))
            case "md5Hash": return m.md5Hash.map(Value.string)
            case "crc32c": return m.crc32c.map(Value.string)
            case "etag": return .string(m.etag)
            case "contentDisposition": return m.contentDisposition.map(Value.string)
            case "contentEncoding": return m.contentEncoding.map(Value.string)
            case "contentLanguage": return m.contentLanguage.map(Value.string)
            case "contentType": return m.contentType.map(Value.string)
            case "metadata": return .host(.metadata(proposed: proposed))
            default: return nil
            }
        case .metadata(let proposed):
            guard let m = proposed ? request.requestResource : request.resource else { return nil }
            return m.customMetadata[name].map(Value.string)
        }
    }

    func keys(_ host: HostRef) -> [String] {
        switch host {
        case .request: return HostRef.requestFields
        case .auth: return ["uid", "token"]
        case .token: return Array(request.auth?.claims.keys ?? [:].keys)
        case .resource(let proposed):
            return HostRef.resourceFields.filter { field(.resource(proposed: proposed), $0) != nil }
        case .metadata(let proposed):
            return Array((proposed ? request.requestResource : request.resource)?.customMetadata.keys ?? [:].keys)
        }
    }

    /// The host object as a plain map (deeply), for equality, `keys()`, `diff()` and the like.
    func materialize(_ v: Value) -> Value {
        guard case .host(let h) = v else { return v }
        var out: [String: Value] = [:]
        for k in keys(h) {
            if let f = field(h, k) { out[k] = materialize(f) }
        }
        return .map(out)
    }

    static func value(fromJSON json: JSONValue) -> Value {
        switch json {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .double(let d): .float(d)
        case .string(let s): .string(s)
        case .array(let a): .list(a.map(value(fromJSON:)))
        case .object(let o): .map(o.mapValues(value(fromJSON:)))
        }
    }
}
