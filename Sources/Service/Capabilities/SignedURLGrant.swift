import PortcullisCore

/// The grant inside a signed URL: one method on one generation of one object until an expiry. It authorizes
/// that method's requests and nothing that outlives it: under a signed-URL grant no download token is minted,
/// revealed or returned, and once the generation it was issued for is overwritten or deleted it opens nothing
/// (an object stored later under the same name is not what was shared).
struct SignedURLGrant: Equatable {
    var method: SignedMethod
    var bucket: String
    var name: String
    /// The generation current when the URL was signed.
    var generation: Int64
    var expiresAtSeconds: Int64

    func seal(_ sealer: CapabilitySealer) -> String {
        sealer.seal(
            purpose: .signedURL,
            payload: .object([
                "m": .string(method.rawValue), "b": .string(bucket), "o": .string(name), "g": .int(generation),
                "e": .int(expiresAtSeconds),
            ]))
    }

    /// Opens a grant and checks it covers this request: bucket, object (by bytes) and method must match and it
    /// must not have expired. The generation is the caller's to check against the object it finds. A grant
    /// without one is not valid.
    static func open(
        _ sealer: CapabilitySealer, token: String, method: SignedMethod, object: ObjectPath,
        now: Timestamp
    ) throws(CapabilityError) -> SignedURLGrant {
        let p = try sealer.open(purpose: .signedURL, token: token)
        guard let m = p["m"]?.stringValue.flatMap(SignedMethod.init(rawValue:)), let b = p["b"]?.stringValue,
            let o = p["o"]?.stringValue, let e = p["e"]?.int64Value
        else { throw .malformed }
        guard b.bytesEqual(object.bucket), o.bytesEqual(object.name) else { throw .mismatch("object") }
        guard m == method else { throw .mismatch("method") }
        guard let g = p["g"]?.int64Value else { throw .mismatch("generation") }
        guard now.secondsSinceEpoch < e else { throw .expired }
        return SignedURLGrant(method: m, bucket: b, name: o, generation: g, expiresAtSeconds: e)
    }
}

/// What a signed URL may grant: reading the object (bytes or metadata, GET and HEAD) or deleting it.
public enum SignedMethod: String, Sendable, Equatable {
    case read = "GET"
    case delete = "DELETE"
}
