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
        for piece in QueryPieces(query) where !(piece.name.isEmpty && piece.value == nil) {
            try append(name: piece.name, value: piece.value ?? "", singleValued: singleValued)
        }
    }

    private mutating func append(name: Substring, value: Substring, singleValued: [String]) throws(ServiceError) {
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

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        pairs.first { $0.name.bytesEqual(name) }?.value
    }

    public func contains(_ name: String) -> Bool { pairs.contains { $0.name.bytesEqual(name) } }

    public static func == (a: QueryParameters, b: QueryParameters) -> Bool {
        a.pairs.elementsEqual(b.pairs) { $0.name.bytesEqual($1.name) && $0.value.bytesEqual($1.value) }
    }
}

/// The pieces of a raw query string between `&`s, each split at its first `=` — as
/// `split(separator: "&", omittingEmptySubsequences: false)` would cut them, empty pieces included (a query of
/// n `&`s has n + 1 pieces). Cut on bytes: request targets are visible ASCII (the HTTP parser refuses anything
/// else), where bytes and `Character`s agree, and a `Character` walk cost ~2 % of an `alt=media` download. The
/// one reading of a query's shape that the parser and the access log's redaction share.
struct QueryPieces: Sequence, IteratorProtocol {
    private let query: Substring
    /// Where the next piece starts; nil once the last one was returned.
    private var start: Substring.UTF8View.Index?

    init(_ query: Substring) {
        self.query = query
        start = query.utf8.startIndex
    }

    /// The next piece: its name, and its value when it has an `=`.
    mutating func next() -> (name: Substring, value: Substring?)? {
        guard let pieceStart = start else { return nil }
        let bytes = query.utf8
        var equals: Substring.UTF8View.Index?
        var end = pieceStart
        while end != bytes.endIndex, bytes[end] != UInt8(ascii: "&") {
            if equals == nil, bytes[end] == UInt8(ascii: "=") { equals = end }
            end = bytes.index(after: end)
        }
        start = end == bytes.endIndex ? nil : bytes.index(after: end)
        guard let equals else { return (query[pieceStart..<end], nil) }
        return (query[pieceStart..<equals], query[bytes.index(after: equals)..<end])
    }
}

/// Percent-decoding (RFC 3986) and encoding used by the router and by URL building.
public enum PercentDecoding {
    /// Decodes `%XX` escapes exactly once; with `plusIsSpace`, `+` becomes a space (query strings only — never
    /// in the path, v0 §2.2). Returns nil for a malformed escape or a result that is not valid UTF-8.
    ///
    /// On every routed request (bucket and object name), so it works on the contiguous bytes and decodes into
    /// stack memory: the result `String` is the only allocation, and none for a short name.
    public static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            let escaped = bytes.contains { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }
            guard escaped else { return String(decoding: bytes, as: UTF8.self) }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { out -> String? in
                var count = 0
                var i = 0
                while i < bytes.count {
                    let c = bytes[i]
                    if c == UInt8(ascii: "%") {
                        guard i + 2 < bytes.count, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2])
                        else { return nil }
                        out[count] = hi << 4 | lo
                        i += 3
                    } else {
                        out[count] = plusIsSpace && c == UInt8(ascii: "+") ? 0x20 : c
                        i += 1
                    }
                    count += 1
                }
                return String(validating: UnsafeBufferPointer(rebasing: out[..<count]), as: UTF8.self)
            }
        }
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
