import PortcullisCore
public import Service

/// Decoded query parameters of a request, in order (form semantics, `+` is a space, as the Firebase SDKs send them).
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
        guard let n = PercentEncoding.decode(name, plusIsSpace: true),
            let v = PercentEncoding.decode(value, plusIsSpace: true)
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
