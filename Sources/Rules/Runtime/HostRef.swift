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

    /// Fields of `resource`.
    static let resourceFields = [
        "name", "bucket", "generation", "metageneration", "size", "timeCreated", "updated", "md5Hash", "crc32c",
        "etag", "contentDisposition", "contentEncoding", "contentLanguage", "contentType", "metadata",
    ]
    static let requestFields = ["auth", "path", "time", "resource", "method", "params"]
}

/// Field names of `request`, `request.auth` and the resource objects, resolved at compile time so the hot
/// path switches on an integer instead of comparing strings.
enum HostField: String, Sendable {
    case auth, path, time, resource, method, params
    case uid, token
    case name, bucket, generation, metageneration, size, timeCreated, updated, md5Hash, crc32c, etag
    case contentDisposition, contentEncoding, contentLanguage, contentType, metadata
}

/// Read access to the request for host values; shared by the evaluator and materialization.
///
/// Holds a pointer to the caller's `RulesRequest` (valid for the synchronous evaluation that created it) so a
/// decision does not retain and release every string of the request and its metadata.
struct HostContext {
    private let pointer: UnsafePointer<RulesRequest>
    let requestPath: [String]

    init(request: UnsafePointer<RulesRequest>, requestPath: [String]) {
        self.pointer = request
        self.requestPath = requestPath
    }

    var request: RulesRequest { _read { yield pointer.pointee } }

    /// Whether `resource` (or, `proposed`, `request.resource`) exists, without copying the metadata.
    func hasResource(proposed: Bool) -> Bool {
        (proposed ? pointer.pointer(to: \.requestResource)! : pointer.pointer(to: \.resource)!).pointee?.size != nil
    }

    func field(_ host: HostRef, _ name: String) -> Value? {
        field(host, name, HostField(rawValue: name))
    }

    /// `known` is `HostField(rawValue: name)`, pre-computed by the compiler for member accesses.
    func field(_ host: HostRef, _ name: String, _ known: HostField?) -> Value? {
        switch host {
        case .request:
            switch known {
            case .auth: return pointer.pointee.auth?.isAdmin == nil ? .null : .host(.auth)
            case .path: return .path(requestPath)
            case .time: return .timestamp(Int128(request.time.nanosecondsSinceEpoch))
            case .resource: return hasResource(proposed: true) ? .host(.resource(proposed: true)) : .null
            case .method: return .string(request.method.rawValue)
            case .params: return .map([:])
            default: return nil
            }
        case .auth:
            // Projections, not `if let auth`: binding would copy the principal (its uid and claims).
            guard pointer.pointee.auth?.isAdmin != nil else { return nil }
            switch known {
            case .uid: return (pointer.pointee.auth?.uid).map(Value.string)
            case .token: return .host(.token)
            default: return nil
            }
        case .token:
            return request.auth?.claims[exactly: name].map(HostContext.value(fromJSON:))
        case .resource(let proposed):
            // Field by field through the pointer: binding the whole `ObjectMetadata` would retain and release
            // every string it holds on each access.
            let r = proposed ? pointer.pointer(to: \.requestResource)! : pointer.pointer(to: \.resource)!
            guard hasResource(proposed: proposed), let known else { return nil }
            switch known {
            case .name: return (r.pointee?.name).map(Value.string)
            case .bucket: return (r.pointee?.bucket).map(Value.string)
            case .size:
                return proposed && pointer.pointee.unknownFields.contains(.size)
                    ? .unknown : (r.pointee?.size).map(Value.int)
            case .md5Hash:
                return proposed && pointer.pointee.unknownFields.contains(.md5Hash)
                    ? .unknown : r.pointee?.md5Hash.map(Value.string)
            case .crc32c:
                return proposed && pointer.pointee.unknownFields.contains(.crc32c)
                    ? .unknown : r.pointee?.crc32c.map(Value.string)
            case .contentDisposition: return r.pointee?.contentDisposition.map(Value.string)
            case .contentEncoding: return r.pointee?.contentEncoding.map(Value.string)
            case .contentLanguage: return r.pointee?.contentLanguage.map(Value.string)
            case .contentType: return r.pointee?.contentType.map(Value.string)
            case .metadata: return .host(.metadata(proposed: proposed))
            // Server-assigned fields are absent from request.resource.
            case .generation: return proposed ? nil : (r.pointee?.generation).map(Value.int)
            case .metageneration: return proposed ? nil : (r.pointee?.metageneration).map(Value.int)
            case .timeCreated:
                return proposed ? nil : (r.pointee?.timeCreated).map { .timestamp(Int128($0.nanosecondsSinceEpoch)) }
            case .updated:
                return proposed ? nil : (r.pointee?.updated).map { .timestamp(Int128($0.nanosecondsSinceEpoch)) }
            case .etag: return proposed ? nil : (r.pointee?.etag).map(Value.string)
            default: return nil
            }
        case .metadata(let proposed):
            guard let m = proposed ? request.requestResource : request.resource else { return nil }
            return m.customMetadata[exactly: name].map(Value.string)
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
        var out: [ExactString: Value] = [:]
        for k in keys(h) {
            guard let f = field(h, k) else { continue }
            let value = materialize(f)
            if value.isUnknown { return value }  // a map with an unknown member compares as unknown
            out[ExactString(k)] = value
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
        case .object(let o):
            // JSON member names are pairwise inequivalent (the parser refuses equivalent ones): no key merges.
            .map(Dictionary(uniqueKeysWithValues: o.map { (ExactString($0.key), value(fromJSON: $0.value)) }))
        }
    }
}
