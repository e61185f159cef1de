import PortcullisCore

/// The capability inside a resumable upload URL (docs/deploying.md): what the chunk, query, cancel and finalize
/// requests need, so they carry no `Authorization` and any instance can serve them.
///
/// Only what later requests need is kept — the target, the staging handle, the declared size and checks, the
/// attributes to commit with, and the starter's identity (the rules at finalize judge the starter, not
/// whoever sends the last chunk). The ticket is encrypted (`CapabilitySealer`), so those claims are unreadable
/// in a URL that passes through proxies and logs. No download token travels in it: when the client declared
/// none, one is derived from the upload's identity (`downloadTokenSeed`) at the start (a GCS session takes the
/// object's metadata then) and again at finalize.
/// It expires `lifetime` after the start, as a GCS session URI does.
struct UploadTicket: Equatable {
    var bucket: String
    var name: String
    /// The backend's staging handle (embedded staging id, GCS session URI, S3 upload id).
    var handle: String
    var declaredSize: Int64?
    var principal: Principal?
    /// The attributes the object is committed with (download tokens only when the client declared them).
    var attributes: ObjectAttributes
    var expectedMD5: String?
    var expectedCRC32C: String?
    var preconditions: Preconditions
    /// When the upload was started (ms since the epoch); used to recognise the object it produced.
    var issuedAtMillis: Int64
    var expiresAtSeconds: Int64
    /// Whether the committed object gets a derived download token (the client declared none).
    var derivesDownloadToken: Bool

    /// How long an upload URL stays valid (GCS: a week).
    static let lifetimeSeconds: Int64 = 7 * 24 * 3600

    func seal(_ sealer: CapabilitySealer) -> String {
        var p: [String: JSONValue] = [
            "b": .string(bucket), "o": .string(name), "h": .string(handle), "t": .int(issuedAtMillis),
            "x": .int(expiresAtSeconds), "a": Self.encode(attributes), "k": .bool(derivesDownloadToken),
        ]
        if let declaredSize { p["s"] = .int(declaredSize) }
        if let expectedMD5 { p["m"] = .string(expectedMD5) }
        if let expectedCRC32C { p["c"] = .string(expectedCRC32C) }
        if let g = preconditions.ifGenerationMatch { p["g"] = .int(g) }
        if let g = preconditions.ifGenerationNotMatch { p["gn"] = .int(g) }
        if let mg = preconditions.ifMetagenerationMatch { p["mg"] = .int(mg) }
        if let mg = preconditions.ifMetagenerationNotMatch { p["mgn"] = .int(mg) }
        if let principal {
            p["u"] = .object([
                "id": .string(principal.uid), "c": .object(principal.claims),
                "admin": .bool(principal.isAdmin),
            ])
        }
        return sealer.seal(purpose: .upload, payload: .object(p))
    }

    /// Opens a ticket for `bucket` (by bytes). An expired ticket is `.expired`.
    static func open(_ sealer: CapabilitySealer, token: String, bucket expected: String, now: Timestamp)
        throws(CapabilityError) -> UploadTicket
    {
        let p = try sealer.open(purpose: .upload, token: token)
        guard let bucket = p["b"]?.stringValue, let name = p["o"]?.stringValue, let handle = p["h"]?.stringValue,
            let issued = p["t"]?.int64Value, let expires = p["x"]?.int64Value,
            let attributes = p["a"].flatMap(decodeAttributes)
        else {
            throw .malformed
        }
        guard bucket.bytesEqual(expected) else { throw .mismatch("bucket") }
        guard now.secondsSinceEpoch < expires else { throw .expired }
        var principal: Principal?
        if let u = p["u"] {
            guard let uid = u["id"]?.stringValue, let claims = u["c"]?.objectValue else { throw .malformed }
            principal = Principal(uid: uid, claims: claims, isAdmin: u["admin"]?.boolValue ?? false)
        }
        return UploadTicket(
            bucket: bucket, name: name, handle: handle, declaredSize: p["s"]?.int64Value, principal: principal,
            attributes: attributes, expectedMD5: p["m"]?.stringValue, expectedCRC32C: p["c"]?.stringValue,
            preconditions: Preconditions(
                ifGenerationMatch: p["g"]?.int64Value,
                ifMetagenerationMatch: p["mg"]?.int64Value,
                ifGenerationNotMatch: p["gn"]?.int64Value,
                ifMetagenerationNotMatch: p["mgn"]?.int64Value),
            issuedAtMillis: issued, expiresAtSeconds: expires, derivesDownloadToken: p["k"]?.boolValue ?? false)
    }

    /// What the derived download token is computed from: the upload's target and start.
    var downloadTokenSeed: String { Self.downloadTokenSeed(bucket: bucket, name: name, issuedAtMillis: issuedAtMillis) }

    static func downloadTokenSeed(bucket: String, name: String, issuedAtMillis: Int64) -> String {
        "\(bucket)\n\(name)\n\(issuedAtMillis)"
    }

    private static func encode(_ a: ObjectAttributes) -> JSONValue {
        var o: [String: JSONValue] = [:]
        if let v = a.contentType { o["ct"] = .string(v) }
        if let v = a.contentEncoding { o["ce"] = .string(v) }
        if let v = a.contentDisposition { o["cd"] = .string(v) }
        if let v = a.contentLanguage { o["cl"] = .string(v) }
        if let v = a.cacheControl { o["cc"] = .string(v) }
        if let v = a.storageClass { o["sc"] = .string(v) }
        if let v = a.customTime { o["ct"] = .string(String(v.nanosecondsSinceEpoch)) }
        if !a.customMetadata.isEmpty { o["m"] = .object(a.customMetadata.mapValues(JSONValue.string)) }
        if !a.downloadTokens.isEmpty { o["t"] = .array(a.downloadTokens.map(JSONValue.string)) }
        return .object(o)
    }

    private static func decodeAttributes(_ v: JSONValue) -> ObjectAttributes? {
        guard let o = v.objectValue else { return nil }
        var a = ObjectAttributes()
        a.contentType = o["ct"]?.stringValue
        a.contentEncoding = o["ce"]?.stringValue
        a.contentDisposition = o["cd"]?.stringValue
        a.contentLanguage = o["cl"]?.stringValue
        a.cacheControl = o["cc"]?.stringValue
        a.storageClass = o["sc"]?.stringValue
        a.customTime = o["ct"]?.stringValue.flatMap { Int64($0) }.map { Timestamp(nanosecondsSinceEpoch: $0) }
        a.customMetadata = (o["m"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
        a.downloadTokens = (o["t"]?.arrayValue ?? []).compactMap(\.stringValue)
        return a
    }
}
