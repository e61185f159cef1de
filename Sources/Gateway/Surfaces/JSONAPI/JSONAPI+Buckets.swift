import HTTPServer
import PortcullisCore
import Service
import Storage

/// `buckets.insert`, `buckets.patch`/`update` and `buckets.delete`: the admin's calls on buckets created under
/// the bucket root. The body carries the fields clients set — `name`, `versioning.enabled`, `labels` — and
/// every other member of the bucket resource is accepted and ignored (the gateway keeps no ACLs, CORS,
/// lifecycle or retention settings; the README says so).
extension JSONAPI {
    func insertBucket(_ call: JSONCall) async throws -> HTTPResponse {
        let members = try JSONObjectBody.members(try await collectJSONBody(call)) ?? [:]
        guard case .string(let name)? = members["name"], !name.isEmpty else {
            throw ServiceError.badRequest("Required field: name.")
        }
        call.record.bucket = name
        let settings = try Self.bucketSettings(members, base: BucketSettings())
        let info = try await service.createBucket(name, settings: settings, caller: call.caller, call.context)
        return Self.json(JSONResources.bucket(info, base: baseURL(call), mask: call.fields))
    }

    /// PATCH merges into the current settings (a label set to `null` is removed); PUT replaces them.
    func changeBucket(_ call: JSONCall, _ name: String, replace: Bool) async throws -> HTTPResponse {
        let members = try JSONObjectBody.members(try await collectJSONBody(call)) ?? [:]
        let current = try service.bucketInfo(name, caller: call.caller, call.context)
        let base =
            replace
            ? BucketSettings()
            : BucketSettings(versioningEnabled: current.versioningEnabled, labels: current.labels)
        let info = try await service.updateBucket(
            name, settings: try Self.bucketSettings(members, base: base),
            ifMetagenerationMatch: try RequestConditions.integer(call.query, "ifMetagenerationMatch"),
            caller: call.caller, call.context)
        return Self.json(JSONResources.bucket(info, base: baseURL(call), mask: call.fields))
    }

    func deleteBucket(_ call: JSONCall, _ name: String) async throws -> HTTPResponse {
        try await service.deleteBucket(
            name, ifMetagenerationMatch: try RequestConditions.integer(call.query, "ifMetagenerationMatch"),
            caller: call.caller, call.context)
        return HTTPResponse(status: 204, body: .empty)
    }

    /// `versioning` and `labels` of a bucket body, applied over `base`.
    static func bucketSettings(_ members: [String: JSONValue], base: BucketSettings) throws(ServiceError)
        -> BucketSettings
    {
        var settings = base
        switch members["versioning"] {
        case nil, .null?: break
        case .object(let versioning)?:
            switch versioning["enabled"] {
            case nil, .null?: break
            case .bool(let enabled)?: settings.versioningEnabled = enabled
            default: throw .badRequest("versioning.enabled must be a boolean.")
            }
        default: throw .badRequest("versioning must be an object.")
        }
        switch members["labels"] {
        case nil: break
        case .null?: settings.labels = [:]
        case .object(let labels)?:
            for (key, value) in labels {
                switch value {
                case .null: settings.labels[exactly: key] = nil
                case .string(let text):
                    guard isLabel(key, key: true), isLabel(text, key: false) else {
                        throw .badRequest(
                            "Invalid label \(key): keys and values are lower-case letters, digits, - and _.")
                    }
                    settings.labels[exactly: key] = text
                default: throw .badRequest("Label values must be strings.")
                }
            }
            guard settings.labels.count <= 64 else { throw .badRequest("A bucket has at most 64 labels.") }
        default: throw .badRequest("labels must be an object.")
        }
        return settings
    }

    /// Cloud Storage's label syntax: up to 63 bytes of lower-case letters, digits, `-` and `_`; a key starts
    /// with a letter and is not empty.
    private static func isLabel(_ text: String, key: Bool) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= 63 else { return false }
        if key {
            guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
                return false
            }
        }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
        }
    }
}
