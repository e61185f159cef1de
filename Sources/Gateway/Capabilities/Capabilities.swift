import PortcullisCore

/// A list `nextPageToken`: the backend's cursor, bound to the bucket, prefix and delimiter it was issued for
/// (DESIGN §5). An edited token, or one replayed under another prefix, does not open (→ 400).
enum ListCursor {
    static func seal(_ signer: CapabilitySigner, bucket: String, prefix: String, delimiter: String?,
                     cursor: String) -> String {
        signer.seal(purpose: .listCursor, payload: .object([
            "b": .string(bucket), "p": .string(prefix), "d": delimiter.map(JSONValue.string) ?? .null,
            "c": .string(cursor),
        ]))
    }

    static func open(_ signer: CapabilitySigner, token: String, bucket: String, prefix: String,
                     delimiter: String?) throws(CapabilityError) -> String {
        let payload = try signer.open(purpose: .listCursor, token: token)
        guard let cursor = payload["c"]?.stringValue else { throw .malformed }
        guard payload["b"]?.stringValue == bucket else { throw .mismatch("bucket") }
        guard payload["p"]?.stringValue == prefix else { throw .mismatch("prefix") }
        guard payload["d"]?.stringValue == delimiter else { throw .mismatch("delimiter") }
        return cursor
    }
}

/// The capability inside a resumable upload URL (v0 §5.9, DESIGN §5): everything the chunk, query, cancel
/// and finalize requests need, so they carry no `Authorization` and any instance can serve them.
struct UploadCapability: Equatable {
    var bucket: String
    var name: String
    /// The backend's staging handle (embedded staging id, GCS session URI, S3 upload id).
    var handle: String
    var declaredSize: Int64?
    /// The starter's identity: the rules at finalize judge the starter, not whoever sends the last chunk.
    var principal: Principal?
    var attributes: ObjectAttributes
    var expectedMD5: String?
    var preconditions: Preconditions
    /// When the upload was started (ms since the epoch); used to recognise the object it produced.
    var issuedAtMillis: Int64

    func seal(_ signer: CapabilitySigner) -> String {
        var p: [String: JSONValue] = [
            "b": .string(bucket), "o": .string(name), "h": .string(handle), "t": .int(issuedAtMillis),
            "a": Self.encode(attributes),
        ]
        if let declaredSize { p["s"] = .int(declaredSize) }
        if let expectedMD5 { p["m"] = .string(expectedMD5) }
        if let g = preconditions.ifGenerationMatch { p["g"] = .int(g) }
        if let mg = preconditions.ifMetagenerationMatch { p["mg"] = .int(mg) }
        if let principal {
            p["u"] = .object(["id": .string(principal.uid), "c": .object(principal.claims),
                              "admin": .bool(principal.isAdmin)])
        }
        return signer.seal(purpose: .upload, payload: .object(p))
    }

    static func open(_ signer: CapabilitySigner, token: String) throws(CapabilityError) -> UploadCapability {
        let p = try signer.open(purpose: .upload, token: token)
        guard let bucket = p["b"]?.stringValue, let name = p["o"]?.stringValue, let handle = p["h"]?.stringValue,
              let issued = p["t"]?.int64Value, let attributes = p["a"].flatMap(decodeAttributes) else {
            throw .malformed
        }
        var principal: Principal?
        if let u = p["u"] {
            guard let uid = u["id"]?.stringValue, let claims = u["c"]?.objectValue else { throw .malformed }
            principal = Principal(uid: uid, claims: claims, isAdmin: u["admin"]?.boolValue ?? false)
        }
        return UploadCapability(
            bucket: bucket, name: name, handle: handle, declaredSize: p["s"]?.int64Value, principal: principal,
            attributes: attributes, expectedMD5: p["m"]?.stringValue,
            preconditions: Preconditions(ifGenerationMatch: p["g"]?.int64Value,
                                         ifMetagenerationMatch: p["mg"]?.int64Value),
            issuedAtMillis: issued)
    }

    private static func encode(_ a: ObjectAttributes) -> JSONValue {
        var o: [String: JSONValue] = [:]
        if let v = a.contentType { o["ct"] = .string(v) }
        if let v = a.contentEncoding { o["ce"] = .string(v) }
        if let v = a.contentDisposition { o["cd"] = .string(v) }
        if let v = a.contentLanguage { o["cl"] = .string(v) }
        if let v = a.cacheControl { o["cc"] = .string(v) }
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
        a.customMetadata = (o["m"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
        a.downloadTokens = (o["t"]?.arrayValue ?? []).compactMap(\.stringValue)
        return a
    }
}

/// The grant inside a signed URL (DESIGN §7): one method on one object until an expiry.
struct SignedURLGrant: Equatable {
    var method: String
    var bucket: String
    var name: String
    var expiresAtSeconds: Int64

    func seal(_ signer: CapabilitySigner) -> String {
        signer.seal(purpose: .signedURL, payload: .object([
            "m": .string(method), "b": .string(bucket), "o": .string(name), "e": .int(expiresAtSeconds),
        ]))
    }

    /// Opens a grant and checks it covers this request: bucket, object and method must match (HEAD is covered
    /// by GET) and it must not have expired.
    static func open(_ signer: CapabilitySigner, token: String, method: String, bucket: String, name: String,
                     now: Timestamp) throws(CapabilityError) -> SignedURLGrant {
        let p = try signer.open(purpose: .signedURL, token: token)
        guard let m = p["m"]?.stringValue, let b = p["b"]?.stringValue, let o = p["o"]?.stringValue,
              let e = p["e"]?.int64Value else { throw .malformed }
        let grant = SignedURLGrant(method: m, bucket: b, name: o, expiresAtSeconds: e)
        guard b == bucket, o == name else { throw .mismatch("object") }
        guard m == method || (m == "GET" && method == "HEAD") else { throw .mismatch("method") }
        guard now.secondsSinceEpoch < e else { throw .expired }
        return grant
    }
}
