import PortcullisCore

/// The path of a route: `/`-separated segments, each a literal, a `{name}` capture of exactly one segment, or —
/// as the last segment only — a `{name...}` capture of the rest of the path, slashes included (it may be
/// empty: the route's decoder says whether an empty rest is an error).
///
/// Literals are compared by bytes, as every identity is. Captures are the raw (still percent-encoded) bytes of
/// the path; decoding them is the route's decoder's job, because only it knows what they name.
public struct RouteTemplate: Sendable, Hashable, CustomStringConvertible {
    public enum Segment: Sendable, Hashable {
        case literal([UInt8])
        case capture(String)
        case rest(String)
    }

    public let segments: [Segment]
    /// The template as metrics and the access log label it: `{name...}` is written `{name}`, so labels name the
    /// route, never a path.
    public let label: String
    /// The names of the captures, in path order (what `RouteMatch` holds, by position).
    public let captureNames: [String]

    public init(_ text: String) throws(RouteTableError) {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { throw .invalidTemplate(text, "must start with /") }
        var segments: [Segment] = []
        var label = ""
        var names: Set<String> = []  // identity-ok: capture names are fixed ASCII words chosen in code
        for piece in bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if segments.last.map({ if case .rest = $0 { true } else { false } }) ?? false {
                throw .invalidTemplate(text, "{name...} must be the last segment")
            }
            let word = Array(piece)
            if word.first == UInt8(ascii: "{") {
                guard word.last == UInt8(ascii: "}"), word.count > 2 else {
                    throw .invalidTemplate(text, "unclosed {")
                }
                var name = String(decoding: word.dropFirst().dropLast(), as: UTF8.self)
                let isRest = name.bytesHasSuffix("...")
                if isRest { name.removeLast(3) }
                guard !name.isEmpty, name.utf8.allSatisfy(Self.isNameByte) else {
                    throw .invalidTemplate(text, "a capture name is letters and digits")
                }
                guard names.insert(name).inserted else { throw .invalidTemplate(text, "{\(name)} appears twice") }
                segments.append(isRest ? .rest(name) : .capture(name))
                label += "/{\(name)}"
            } else {
                guard !word.contains(UInt8(ascii: "{")), !word.contains(UInt8(ascii: "}")) else {
                    throw .invalidTemplate(text, "stray brace")
                }
                // An empty segment only at the end: `/console/` is the folder's own page.
                guard !word.isEmpty || piece.endIndex == bytes.endIndex else {
                    throw .invalidTemplate(text, "empty segment")
                }
                segments.append(.literal(word))
                label += "/" + String(decoding: word, as: UTF8.self)
            }
        }
        self.segments = segments
        self.label = label
        self.captureNames = segments.compactMap {
            switch $0 {
            case .literal: nil
            case .capture(let name), .rest(let name): name
            }
        }
    }

    /// A template written in the code (a surface's table): an invalid one is a programming error, caught by the
    /// first test that builds the table.
    public init(static text: String) {
        do { self = try RouteTemplate(text) } catch { preconditionFailure("\(error)") }
    }

    /// Two templates of the same shape match exactly the same paths (capture names aside).
    func hasSameShape(as other: RouteTemplate) -> Bool {
        guard segments.count == other.segments.count else { return false }
        return zip(segments, other.segments).allSatisfy { a, b in
            switch (a, b) {
            case (.literal(let x), .literal(let y)): x == y
            case (.capture, .capture), (.rest, .rest): true
            default: false
            }
        }
    }

    public var description: String { label }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// A route table that cannot be compiled: the server refuses to start and says why.
public enum RouteTableError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidTemplate(String, String)
    /// Two routes match the same paths for a method: which one serves it would be an accident of order.
    case overlap(String, String, method: String)
    /// Two surfaces claim the same path prefix for their unmatched answers.
    case overlappingPrefixes(String, String)

    public var description: String {
        switch self {
        case .invalidTemplate(let template, let why): "route template \(template): \(why)"
        case .overlap(let a, let b, let method): "routes \(a) and \(b) both serve \(method) on the same paths"
        case .overlappingPrefixes(let a, let b): "surfaces claim overlapping path prefixes \(a) and \(b)"
        }
    }
}
