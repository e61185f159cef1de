/// A JSON document as a value: what token claims, request bodies and rules test cases are made of.
///
/// Integers are kept apart from doubles because the rules language distinguishes `int` from `float`.
/// Encoded objects list their members in UTF-8 byte order of their names, so output is stable.
///
/// Equality and hashing compare strings and member names by their UTF-8 bytes (not canonical equivalence), and
/// the parser refuses an object whose member names are canonically equivalent but not identical, so a
/// `String`-keyed member dictionary never merges two distinct names; `subscript(key)` reads exactly `key`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[exactly: key] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The value as an integer when it is one (a double with no fraction counts, as JWT `exp` may be `1.7e9`).
    public var int64Value: Int64? {
        switch self {
        case .int(let i): i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: Int64(d)
        default: nil
        }
    }
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// Structural equality with strings and member names compared by bytes.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.string(let x), .string(let y)): return x.bytesEqual(y)
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for (key, value) in x {
                guard let other = y[exactly: key], other == value else { return false }
            }
            return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let b): hasher.combine(1 as UInt8); hasher.combine(b)
        case .int(let i): hasher.combine(2 as UInt8); hasher.combine(i)
        case .double(let d): hasher.combine(3 as UInt8); hasher.combine(d)
        case .string(let s): hasher.combine(4 as UInt8); hasher.combine(ExactString(s))
        case .array(let items): hasher.combine(5 as UInt8); hasher.combine(items)
        case .object(let members):
            // Order-independent: the members' hashes combined commutatively.
            hasher.combine(6 as UInt8)
            var sum = 0
            for (key, value) in members {
                var member = Hasher()
                member.combine(ExactString(key))
                member.combine(value)
                sum = sum &+ member.finalize()
            }
            hasher.combine(sum)
        }
    }
}

/// Why a JSON text was refused, with the byte offset where parsing stopped.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// Limits that keep hostile input cheap: nesting depth and total size are bounded by the caller's body limit.
    public static let maxDepth = 64

    /// Parses one JSON text (RFC 8259), rejecting trailing garbage, lone surrogates and nesting beyond `maxDepth`.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: Array(bytes))
        return try parser.parseDocument()
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Compact encoding; object keys sorted so output is deterministic.
    public func encoded() -> String {
        var out = [UInt8]()
        encode(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func encode(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite {
                if d.rounded() == d && abs(d) < 1e15 {
                    out.append(contentsOf: String(Int64(d)).utf8)
                } else {
                    out.append(contentsOf: "\(d)".utf8)
                }
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): JSONValue.encodeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.encode(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.sorted(by: { $0.key.bytesLess(than: $1.key) }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.encodeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.encode(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

struct JSONParser {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard i == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    mutating func skipWhitespace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < JSONValue.maxDepth else { throw fail("nesting deeper than \(JSONValue.maxDepth)") }
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var members: [String: JSONValue] = [:]
            var sawNonASCIIKey = false
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try parseString()
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                i += 1
                skipWhitespace()
                // Two member names that differ in bytes but are canonically equivalent would share one slot of
                // the String-keyed dictionary: an ambiguous document, refused. Only a non-ASCII name can be
                // equivalent to a different one (e.g. U+212A KELVIN SIGN and "K"), so ASCII-only objects skip it.
                let isASCII = key.utf8.allSatisfy { $0 < 0x80 }
                // identity-ok: reads the stored key to compare its bytes
                if sawNonASCIIKey || !isASCII, let stored = members.index(forKey: key),
                    // identity-ok: the stored key, compared by bytes
                    !members[stored].key.bytesEqual(key)
                {
                    throw fail("member names differ only by Unicode normalization")
                }
                sawNonASCIIKey = sawNonASCIIKey || !isASCII
                // identity-ok: the check above makes this key's bytes the only spelling in the object
                members[key] = try parseValue(depth: depth + 1)
                skipWhitespace()
                guard i < bytes.count else { throw fail("unterminated object") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                throw fail("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skipWhitespace()
                items.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard i < bytes.count else { throw fail("unterminated array") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default:
            return try parseNumber()
        }
    }

    /// Reads past one value as `parseValue` would read it — same grammar and limits — without building it: an
    /// ASCII string without escapes (nearly every string) is scanned, not copied. Member names of skipped objects
    /// are not checked for canonical equivalence (nothing keeps them).
    mutating func skipValue(depth: Int) throws(JSONParseError) {
        guard depth < JSONValue.maxDepth else { throw fail("nesting deeper than \(JSONValue.maxDepth)") }
        guard i < bytes.count else { throw fail("unexpected end of input") }
        let open = bytes[i]
        guard open == UInt8(ascii: "{") || open == UInt8(ascii: "[") else {
            if open == UInt8(ascii: "\"") { return try skipString() }
            _ = try parseValue(depth: depth)  // a literal or a number: nothing allocated for the usual ones
            return
        }
        let isObject = open == UInt8(ascii: "{")
        let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        i += 1
        skipWhitespace()
        if i < bytes.count, bytes[i] == close {
            i += 1
            return
        }
        while true {
            skipWhitespace()
            if isObject {
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                try skipString()
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                i += 1
                skipWhitespace()
            }
            try skipValue(depth: depth + 1)
            skipWhitespace()
            guard i < bytes.count else { throw fail(isObject ? "unterminated object" : "unterminated array") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == close {
                i += 1
                return
            }
            throw fail(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
        }
    }

    /// `parseString` without the string: a slice of the input is all a plain string costs.
    mutating func skipString() throws(JSONParseError) {
        _ = try parseStringBytes()
    }

    mutating func literal(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let count = word.utf8.count
        guard i + count <= bytes.count, bytes[i..<(i + count)].elementsEqual(word.utf8) else {
            throw fail("invalid literal")
        }
        i += count
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
        guard i > intStart else { throw fail("invalid value") }
        if bytes[intStart] == 48, i - intStart > 1 { throw fail("leading zero in number") }
        var isInteger = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let fracStart = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            guard i > fracStart else { throw fail("digits expected after '.'") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let expStart = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            guard i > expStart else { throw fail("digits expected in exponent") }
        }
        if isInteger, i - intStart <= 18 {
            // Fast path: at most 18 digits always fit in Int64; no String round trip.
            var value: Int64 = 0
            for k in intStart..<i { value = value &* 10 &+ Int64(bytes[k] &- 48) }
            return .int(bytes[start] == UInt8(ascii: "-") ? -value : value)
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        // `Double` reads a magnitude past its range as infinity, which JSON cannot write back (it would leave as
        // `null`): out of range.
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
        return .double(value)
    }

    /// The string that comes next as its UTF-8 bytes: a slice of the input when it holds no escape (checked to be
    /// UTF-8, not copied), else the decoded bytes. For readers that compare or parse the text and need no `String`.
    mutating func parseStringBytes() throws(JSONParseError) -> ArraySlice<UInt8> {
        let opening = i
        i += 1
        let start = i
        var high: UInt8 = 0
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 {
            high |= bytes[i]
            i += 1
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            let text = bytes[start..<i]
            guard high < 0x80 || String(validating: text, as: UTF8.self) != nil else {
                throw fail("invalid UTF-8 in string")
            }
            i += 1
            return text
        }
        i = opening
        return ArraySlice(try parseString().utf8)
    }

    mutating func parseString() throws(JSONParseError) -> String {
        i += 1  // opening quote
        // Fast path: a string without escapes becomes a String straight from the input bytes (no scratch buffer).
        let start = i
        var high: UInt8 = 0
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 {
            high |= bytes[i]
            i += 1
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\""), high < 0x80 {
            let end = i
            i += 1
            return bytes.withUnsafeBufferPointer {
                String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self)
            }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            // Decoding repairs invalid UTF-8; the result equals the input bytes exactly when they were valid.
            // (Non-generic, so no runtime metadata lookups per string.)
            let end = i
            let string = bytes.withUnsafeBufferPointer { buffer -> String? in
                let slice = UnsafeBufferPointer(rebasing: buffer[start..<end])
                let decoded = String(decoding: slice, as: UTF8.self)
                let same =
                    decoded.utf8.withContiguousStorageIfAvailable { $0.elementsEqual(slice) }
                    ?? decoded.utf8.elementsEqual(slice)
                return same ? decoded : nil
            }
            guard let string else { throw fail("invalid UTF-8 in string") }
            i += 1
            return string
        }
        i = start
        var out = [UInt8]()
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") { i += 1; break }
            if byte < 0x20 { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") { out.append(byte); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw fail("unterminated escape") }
            let escape = bytes[i]
            i += 1
            switch escape {
            case UInt8(ascii: "\""): out.append(34)
            case UInt8(ascii: "\\"): out.append(92)
            case UInt8(ascii: "/"): out.append(47)
            case UInt8(ascii: "b"): out.append(8)
            case UInt8(ascii: "f"): out.append(12)
            case UInt8(ascii: "n"): out.append(10)
            case UInt8(ascii: "r"): out.append(13)
            case UInt8(ascii: "t"): out.append(9)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == 92, bytes[i + 1] == UInt8(ascii: "u") else {
                        throw fail("lone surrogate")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw fail("lone surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid code point") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw fail("invalid escape")
            }
        }
        guard let string = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
        return string
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 65...70: d = UInt32(c - 55)
            case 97...102: d = UInt32(c - 87)
            default: throw fail("invalid hex digit")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}
