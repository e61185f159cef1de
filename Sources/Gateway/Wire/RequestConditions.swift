public import HTTPServer
public import PortcullisCore
public import Service

/// Conditions and ranges as both surfaces send them: GCS's generation parameters in the query, the HTTP
/// validators and `Range` in the headers. Parsed here once; judged by the service.
public enum RequestConditions {
    /// The query parameters that carry generation preconditions (each single-valued).
    public static let parameterNames = [
        "ifGenerationMatch", "ifGenerationNotMatch", "ifMetagenerationMatch",
        "ifMetagenerationNotMatch",
    ]

    /// `ifGenerationMatch` and friends (400 when present but not a non-negative integer).
    public static func generation(_ query: QueryParameters) throws(ServiceError) -> Preconditions {
        func int(_ name: String) throws(ServiceError) -> Int64? { try integer(query, name) }
        return Preconditions(
            ifGenerationMatch: try int("ifGenerationMatch"),
            ifMetagenerationMatch: try int("ifMetagenerationMatch"),
            ifGenerationNotMatch: try int("ifGenerationNotMatch"),
            ifMetagenerationNotMatch: try int("ifMetagenerationNotMatch"))
    }

    /// A non-negative integer query parameter (400 when present but not one).
    public static func integer(_ query: QueryParameters, _ name: String) throws(ServiceError) -> Int64? {
        guard let text = query[name] else { return nil }
        guard let value = Int64(text), value >= 0 else { throw .badRequest("\(name) must be a non-negative integer.") }
        return value
    }

    /// The generation preconditions plus `If-Match`, `If-None-Match`, `If-Modified-Since`,
    /// `If-Unmodified-Since` (an unparsable date is ignored, as RFC 9110 says).
    public static func parse(_ query: QueryParameters, _ headers: HTTPHeaders) throws(ServiceError) -> Conditions {
        Conditions(
            generation: try generation(query),
            ifMatch: headers["If-Match"].map(EntityTagList.init(parsing:)),
            ifNoneMatch: headers["If-None-Match"].map(EntityTagList.init(parsing:)),
            ifModifiedSince: headers["If-Modified-Since"].flatMap(HTTPDate.parse),
            ifUnmodifiedSince: headers["If-Unmodified-Since"].flatMap(HTTPDate.parse))
    }

    /// One well-formed `bytes` range with its `If-Range`, or nil (anything else is served whole, as RFC 9110
    /// allows).
    public static func range(_ headers: HTTPHeaders) -> RangeRequest? {
        guard let spec = headers["Range"].flatMap({ ByteRangeSpec.parse($0) }) else { return nil }
        let ifRange: RangeRequest.IfRange? = headers["If-Range"].map { raw in
            let value = raw.trimmingSpaces()
            if value.hasPrefix("\"") { return .entityTag(value) }
            if let date = HTTPDate.parse(value) { return .date(date) }
            return .unusable
        }
        return RangeRequest(spec: spec, ifRange: ifRange)
    }
}

/// `Accept-Encoding` as decompressive transcoding reads it.
public enum AcceptEncoding {
    /// Whether a gzip body is acceptable: `gzip` (or `x-gzip`, or `*`) listed with a non-zero weight. An absent
    /// header means the client did not ask for gzip, so a gzip-stored object is decompressed for it (as Cloud
    /// Storage does).
    public static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        var wildcard = false
        for item in header.bytesSplit(separator: UInt8(ascii: ",")) {
            let parts = item.bytesSplit(separator: UInt8(ascii: ";"))
            guard let coding = parts.first?.trimmingSpaces().lowercased() else { continue }
            let weight =
                parts.dropFirst().lazy.map { $0.trimmingSpaces().lowercased() }
                .compactMap { $0.bytesRemovingPrefix("q=") }.first.flatMap { Double($0) } ?? 1
            switch coding {
            case "gzip", "x-gzip": return weight > 0
            case "*": wildcard = weight > 0
            default: continue
            }
        }
        return wildcard
    }
}
