import PortcullisCore

/// A list `nextPageToken`: the backend's cursor, bound to the listing it was issued for (docs/deploying.md): bucket,
/// prefix, delimiter and the listing's other options. An edited token, or one replayed under another listing,
/// does not open (→ 400). Compared by bytes: a prefix and its canonical equivalent are different listings.
struct ListCursor: Equatable {
    /// Everything that shapes a listing except the page size, as written into and compared against a token.
    var binding: [String: String]
    /// The backend's own cursor.
    var cursor: String

    func seal(_ sealer: CapabilitySealer) -> String {
        var payload = binding.mapValues(JSONValue.string)
        payload["c"] = .string(cursor)
        return sealer.seal(purpose: .listCursor, payload: .object(payload))
    }

    /// Opens `token` and checks it was issued for exactly `binding`; returns the backend cursor.
    static func open(_ sealer: CapabilitySealer, token: String, binding: [String: String]) throws(CapabilityError)
        -> String
    {
        let payload = try sealer.open(purpose: .listCursor, token: token)
        guard let members = payload.objectValue, let cursor = members["c"]?.stringValue else { throw .malformed }
        guard members.count == binding.count + 1 else { throw .mismatch("listing") }
        for (key, value) in binding {
            guard let sealed = members[exactly: key]?.stringValue, sealed.bytesEqual(value) else {
                throw .mismatch(key)
            }
        }
        return cursor
    }
}
