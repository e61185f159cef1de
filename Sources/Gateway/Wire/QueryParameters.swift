import PortcullisCore
public import Service

/// Decoded query parameters of a request, in order (v0 §2.3: form semantics, `+` is a space).
public struct QueryParameters: Sendable, Equatable {
    public private(set) var pairs: [(name: String, value: String)] = []

    public init() {}

    /// Parses a raw query string. Fails on malformed percent escapes or escapes that are not UTF-8, and on a
    /// repeated `singleValued` parameter: a proxy and the gateway could read different values of it (first
    /// or last wins), so the request is ambiguous and refused.
    public init(parsing query: Substring?, singleValued: [String] = []) throws(ServiceError) {
        guard let query, !query.isEmpty else { return }
        for piece in query.split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring, value: Substring
            if let eq = piece.firstIndex(of: "=") {
                name = piece[..<eq]
                value = piece[piece.index(after: eq)...]
            } else {
                name = piece
                value = ""
            }
            guard let n = PercentDecoding.decode(name, plusIsSpace: true),
                let v = PercentDecoding.decode(value, plusIsSpace: true)
            else {
                throw .badRequest("Malformed percent-encoding in the query string.")
            }
            if singleValued.containsBytes(n), pairs.contains(where: { $0.name.bytesEqual(n) }) {
                throw .badRequest("The query parameter \(n) is given more than once.")
            }
            pairs.append((n, v))
        }
    }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        pairs.first { $0.name.bytesEqual(name) }?.value
    }

    public func contains(_ name: String) -> Bool { pairs.contains { $0.name.bytesEqual(name) } }

    public static func == (a: QueryParameters, b: QueryParameters) -> Bool {
        a.pairs.elementsEqual(b.pairs) { $0.name.bytesEqual($1.name) && $0.value.bytesEqual($1.value) }
    }
}

/// Percent-decoding (RFC 3986) and encoding used by the router and by URL building.
public enum PercentDecoding {
    /// Decodes `%XX` escapes exactly once; with `plusIsSpace`, `+` becomes a space (query strings only — never
    /// in the path, v0 §2.2). Returns nil for a malformed escape or a result that is not valid UTF-8.
    public static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        let utf8 = text.utf8
        if !utf8.contains(UInt8(ascii: "%")) && !(plusIsSpace && utf8.contains(UInt8(ascii: "+"))) {
            return String(text)
        }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count)
        var i = utf8.startIndex
        while i != utf8.endIndex {
            let c = utf8[i]
            if c == UInt8(ascii: "%") {
                let h = utf8.index(after: i)
                guard h != utf8.endIndex else { return nil }
                let l = utf8.index(after: h)
                guard l != utf8.endIndex, let hi = hexValue(utf8[h]), let lo = hexValue(utf8[l]) else { return nil }
                out.append(hi << 4 | lo)
                i = utf8.index(after: l)
            } else {
                out.append(plusIsSpace && c == UInt8(ascii: "+") ? 0x20 : c)
                i = utf8.index(after: i)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 65...70: c - 55
        case 97...102: c - 87
        default: nil
        }
    }

    /// `encodeURIComponent`: everything but `A–Z a–z 0–9 - _ . ! ~ * ' ( )` is percent-encoded as UTF-8, so the
    /// result survives the JS and iOS reference-URL parsers (§2.4).
    public static func encodeComponent(_ text: String) -> String { PercentEncoding.uriComponent.encode(text) }

    /// RFC 5987/8187 `attr-char` encoding for `filename*=UTF-8''…`: only `A–Z a–z 0–9 ! # $ & + - . ^ _ ` | ~`
    /// stay literal.
    public static func encodeRFC8187(_ text: String) -> String { PercentEncoding.rfc8187.encode(text) }
}
