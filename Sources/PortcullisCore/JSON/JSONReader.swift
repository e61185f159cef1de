/// A pull reader over one JSON text, for decoders that want a few members of a known shape: members are read in
/// document order and handed over one at a time, so nothing the decoder does not ask for becomes a dictionary
/// entry. Same grammar, limits and errors as `JSONValue.parse` (it shares the parser).
///
/// Why beside `JSONValue`: an upstream's object resource is parsed on every proxied metadata read, and building
/// its dictionary (hashing each key, a `JSONValue` per member) only to look ten members up again cost more than the
/// reading itself (bench/NOTES.md, "What binds S16").
///
/// Unlike `JSONValue.parse`, an object whose member names repeat is not refused: the decoder sees each in turn
/// (for a decoder that keeps the last, as a dictionary would); and a value read past (`skipValue`) is checked for
/// its grammar only, not built.
public struct JSONReader {
    private var parser: JSONParser
    private var depth = 0

    public init(_ bytes: [UInt8]) {
        parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
    }

    /// Reads the object that comes next, calling `member` with each member's name; `member` must read the value
    /// (any `read…` call, or `skipValue`).
    public mutating func readObject(
        _ member: (inout JSONReader, JSONKey) throws(JSONParseError) -> Void
    ) throws(JSONParseError) {
        guard depth < JSONValue.maxDepth else { throw parser.fail("nesting deeper than \(JSONValue.maxDepth)") }
        guard parser.i < parser.bytes.count, parser.bytes[parser.i] == UInt8(ascii: "{") else {
            throw parser.fail("expected an object")
        }
        parser.i += 1
        depth += 1
        defer { depth -= 1 }
        parser.skipWhitespace()
        if parser.i < parser.bytes.count, parser.bytes[parser.i] == UInt8(ascii: "}") {
            parser.i += 1
            parser.skipWhitespace()
            return
        }
        while true {
            parser.skipWhitespace()
            guard parser.i < parser.bytes.count, parser.bytes[parser.i] == UInt8(ascii: "\"") else {
                throw parser.fail("expected a string key")
            }
            let key = JSONKey(utf8: try parser.parseStringBytes())
            parser.skipWhitespace()
            guard parser.i < parser.bytes.count, parser.bytes[parser.i] == UInt8(ascii: ":") else {
                throw parser.fail("expected ':'")
            }
            parser.i += 1
            parser.skipWhitespace()
            let before = parser.i
            try member(&self, key)
            if parser.i == before { try skipValue() }
            parser.skipWhitespace()
            guard parser.i < parser.bytes.count else { throw parser.fail("unterminated object") }
            if parser.bytes[parser.i] == UInt8(ascii: ",") {
                parser.i += 1
                continue
            }
            if parser.bytes[parser.i] == UInt8(ascii: "}") {
                parser.i += 1
                parser.skipWhitespace()
                return
            }
            throw parser.fail("expected ',' or '}'")
        }
    }

    /// Whether the value that comes next is an object.
    public var nextIsObject: Bool { parser.i < parser.bytes.count && parser.bytes[parser.i] == UInt8(ascii: "{") }

    /// Whether the value that comes next is a string.
    public var nextIsString: Bool { parser.i < parser.bytes.count && parser.bytes[parser.i] == UInt8(ascii: "\"") }

    /// The value that comes next, whole.
    public mutating func readValue() throws(JSONParseError) -> JSONValue {
        let value = try parser.parseValue(depth: depth)
        parser.skipWhitespace()
        return value
    }

    /// The value that comes next when it is a string; any other value is read past and gives nil.
    public mutating func readString() throws(JSONParseError) -> String? {
        if parser.i < parser.bytes.count, parser.bytes[parser.i] == UInt8(ascii: "\"") {
            let string = try parser.parseString()
            parser.skipWhitespace()
            return string
        }
        try skipValue()
        return nil
    }

    /// The value that comes next when it is a string, as its UTF-8 bytes (no `String` built: for text the decoder
    /// parses, such as numbers and times); any other value is read past and gives nil.
    public mutating func readStringBytes() throws(JSONParseError) -> ArraySlice<UInt8>? {
        guard nextIsString else {
            try skipValue()
            return nil
        }
        let text = try parser.parseStringBytes()
        parser.skipWhitespace()
        return text
    }

    /// Reads past the value that comes next (checking its grammar, building nothing).
    public mutating func skipValue() throws(JSONParseError) {
        try parser.skipValue(depth: depth)
        parser.skipWhitespace()
    }

    /// Checks that nothing but whitespace follows what was read.
    public func finish() throws(JSONParseError) {
        guard parser.i == parser.bytes.count else { throw parser.fail("unexpected data after the JSON value") }
    }
}

/// A member's name as `JSONReader` read it: its UTF-8 bytes, unescaped. A decoder looking names up compares bytes;
/// most names it meets are ones it skips, and a `String` for each would be built only to be thrown away.
public struct JSONKey {
    public let utf8: ArraySlice<UInt8>

    public init(utf8: ArraySlice<UInt8>) { self.utf8 = utf8 }

    /// The name as text.
    public var string: String { String(decoding: utf8, as: UTF8.self) }
}
