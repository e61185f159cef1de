import PortcullisCore
public import Service

#if canImport(Glibc)
import Glibc
#endif

/// Decoded query parameters of a request, in order (form semantics, `+` is a space, as the Firebase SDKs send them).
public struct QueryParameters: Sendable, Equatable {
    public private(set) var pairs: [(name: String, value: String)] = []

    public init() {}

    /// Parses a raw query string. Fails on malformed percent escapes or escapes that are not UTF-8, and on a
    /// repeated `singleValued` parameter: a proxy and the gateway could read different values of it (first
    /// or last wins), so the request is ambiguous and refused.
    public init(parsing query: Substring?, singleValued: [String] = []) throws(ServiceError) {
        guard let query, !query.isEmpty else { return }
        pairs = try query.withContiguousUTF8 { bytes throws(ServiceError) in
            var pairs: [(name: String, value: String)] = []
            pairs.reserveCapacity(bytes.reduce(1) { $1 == UInt8(ascii: "&") ? $0 + 1 : $0 })
            for piece in QueryPieces(bytes) where !(piece.name.isEmpty && piece.value == nil) {
                try Self.append(name: piece.name, value: piece.value, singleValued: singleValued, to: &pairs)
            }
            return pairs
        }
    }

    private static func append(
        name: QueryPieces.Bytes, value: QueryPieces.Bytes?, singleValued: [String],
        to pairs: inout [(name: String, value: String)]
    ) throws(ServiceError) {
        guard let n = PercentEncoding.decode(UnsafeBufferPointer(rebasing: name), plusIsSpace: true),
            let v = value.map({ PercentEncoding.decode(UnsafeBufferPointer(rebasing: $0), plusIsSpace: true) }) ?? ""
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
/// n `&`s has n + 1 pieces). The one reading of a query's shape: the parser, the router's gate-key test, SigV4's
/// canonical query and the access log's redaction all cut with it.
///
/// Cut on contiguous UTF-8 bytes (`withContiguousUTF8`): request targets are visible ASCII (the HTTP parser refuses
/// anything else), where bytes and `Character`s agree, and a `Substring.UTF8View` walk of a presigned URL's long
/// query cost whole per cents of an S3 GetObject. A `&` or `=` followed by a combining mark still cuts.
/// Pieces are slices of the walked buffer, so their indices are offsets into it.
struct QueryPieces: Sequence, IteratorProtocol {
    typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    private let bytes: UnsafeBufferPointer<UInt8>
    private let end: Int
    /// Where the next piece starts; nil once the last one was returned.
    private var start: Int?

    /// The pieces of `query`, a part of a buffer (the query after a target's `?`).
    init(_ query: Bytes) {
        bytes = query.base
        end = query.endIndex
        start = query.startIndex
    }

    /// The pieces of a whole buffer holding just the query.
    init(_ query: UnsafeBufferPointer<UInt8>) { self.init(query[...]) }

    /// The next piece: its name, and its value when it has an `=`.
    mutating func next() -> (name: Bytes, value: Bytes?)? {
        guard let pieceStart = start else { return nil }
        let cut = Self.firstIndex(of: UInt8(ascii: "&"), in: bytes, from: pieceStart, to: end)
        start = cut < end ? cut + 1 : nil
        let equals = Self.firstIndex(of: UInt8(ascii: "="), in: bytes, from: pieceStart, to: cut)
        guard equals < cut else { return (bytes[pieceStart..<cut], nil) }
        return (bytes[pieceStart..<equals], bytes[(equals + 1)..<cut])
    }

    /// The first index of `byte` in `bytes[from..<to]`, else `to`. libc's `memchr`, as the HTTP parser finds its
    /// line ends: a presigned URL's query is hundreds of bytes, cut on every request by the access log's redaction
    /// and the parser.
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int {
        guard from < to, let base = bytes.baseAddress else { return to }
        guard let found = memchr(base + from, Int32(byte), to - from) else { return to }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }
}
