public import PortcullisCore

/// An object's metadata as the v0 API reports it, and the carrier of metadata changes.
///
/// Like the Firebase iOS SDK, a value remembers the state it was read in: `updateMetadata` sends only what
/// changed since then — changed fields, `nil`-ed fields as JSON `null` (delete), and a per-key diff of the
/// custom metadata.
public struct StorageMetadata: Sendable, Equatable {
    public var bucket: String
    public var path: String
    public var name: String { path.bytesSplit(separator: UInt8(ascii: "/")).last ?? path }
    public var size: Int64
    public var generation: Int64
    public var metageneration: Int64
    public var timeCreated: Timestamp?
    public var updated: Timestamp?
    public var md5Hash: String?
    public var contentType: String?
    public var contentEncoding: String?
    public var contentDisposition: String?
    public var contentLanguage: String?
    public var cacheControl: String?
    public var customMetadata: [String: String]
    public var downloadTokens: [String]

    /// The settable fields as they were when this value came from the server (nil for a fresh value).
    var initial: Settable?

    public init(contentType: String? = nil, customMetadata: [String: String] = [:]) {
        bucket = ""
        path = ""
        size = 0
        generation = 0
        metageneration = 0
        self.contentType = contentType
        self.customMetadata = customMetadata
        downloadTokens = []
    }

    struct Settable: Sendable, Equatable {
        var contentType, contentEncoding, contentDisposition, contentLanguage, cacheControl: String?
        var customMetadata: [String: String]
    }

    var settable: Settable {
        Settable(
            contentType: contentType, contentEncoding: contentEncoding, contentDisposition: contentDisposition,
            contentLanguage: contentLanguage, cacheControl: cacheControl, customMetadata: customMetadata)
    }

    /// Decodes the v0 metadata resource (numbers arrive as decimal strings; either form is accepted).
    init(json: JSONValue) throws(StorageError) {
        guard case .object(let o) = json else {
            throw StorageError(.unknown, "Invalid metadata returned from the server.")
        }
        func string(_ key: String) -> String? { o[key]?.stringValue }
        func integer(_ key: String) -> Int64 {
            if let s = o[key]?.stringValue { return Int64(s) ?? 0 }
            return o[key]?.int64Value ?? 0
        }
        bucket = string("bucket") ?? ""
        path = string("name") ?? ""
        size = integer("size")
        generation = integer("generation")
        metageneration = integer("metageneration")
        timeCreated = string("timeCreated").flatMap { Timestamp(rfc3339: $0) }
        updated = string("updated").flatMap { Timestamp(rfc3339: $0) }
        md5Hash = string("md5Hash")
        contentType = string("contentType")
        contentEncoding = string("contentEncoding")
        contentDisposition = string("contentDisposition")
        contentLanguage = string("contentLanguage")
        cacheControl = string("cacheControl")
        var custom: [String: String] = [:]
        for (key, value) in o["metadata"]?.objectValue ?? [:] {
            if let s = value.stringValue { custom[key] = s }
        }
        customMetadata = custom
        downloadTokens = (string("downloadTokens") ?? "").bytesSplit(separator: UInt8(ascii: ","))
        initial = nil
        initial = settable
    }

    /// The JSON body for an upload: every set field.
    func uploadJSON(path: String) -> JSONValue {
        var o: [String: JSONValue] = ["name": .string(path)]
        let s = settable
        if let v = s.contentType { o["contentType"] = .string(v) }
        if let v = s.contentEncoding { o["contentEncoding"] = .string(v) }
        if let v = s.contentDisposition { o["contentDisposition"] = .string(v) }
        if let v = s.contentLanguage { o["contentLanguage"] = .string(v) }
        if let v = s.cacheControl { o["cacheControl"] = .string(v) }
        if !s.customMetadata.isEmpty { o["metadata"] = .object(s.customMetadata.mapValues { .string($0) }) }
        return .object(o)
    }

    /// The PATCH body: only what differs from the state this value was read in.
    func patchJSON() -> JSONValue {
        let before = initial ?? Settable(customMetadata: [:])
        let now = settable
        var o: [String: JSONValue] = [:]
        func diff(_ key: String, _ old: String?, _ new: String?) {
            if old != new { o[key] = new.map(JSONValue.string) ?? .null }
        }
        diff("contentType", before.contentType, now.contentType)
        diff("contentEncoding", before.contentEncoding, now.contentEncoding)
        diff("contentDisposition", before.contentDisposition, now.contentDisposition)
        diff("contentLanguage", before.contentLanguage, now.contentLanguage)
        diff("cacheControl", before.cacheControl, now.cacheControl)
        var custom: [String: JSONValue] = [:]
        for (key, value) in now.customMetadata where before.customMetadata[key] != value {
            custom[key] = .string(value)
        }
        for key in before.customMetadata.keys where now.customMetadata[key] == nil { custom[key] = .null }
        if !custom.isEmpty { o["metadata"] = .object(custom) }
        return .object(o)
    }
}

/// One page of a listing.
public struct StorageListResult: Sendable {
    public let prefixes: [StorageReference]
    public let items: [StorageReference]
    public let pageToken: String?
}
