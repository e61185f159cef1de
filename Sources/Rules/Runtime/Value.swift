internal import PortcullisCore

/// A run-time value of the rules language.
///
/// Strings are compared as Java compares them (the rules runtime is Java): equal when their code units are
/// (for valid Unicode: their bytes), ordered by UTF-16 code units. Never by Swift's `String ==`/`<`, which follow
/// canonical equivalence — a decomposed uid must not equal the composed owner's folder name. Map keys are
/// `ExactString`s for the same reason.
///
/// Errors are values too (`.error`): they propagate through operators until `&&`/`||` absorb them or the
/// statement's condition ends up not being `true`. `.host` is a lazily-read view of the request (see
/// `HostRef`), turned into a plain map only when an operation needs the whole object.
enum Value: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case bytes([UInt8])
    case list([Value])
    case map([ExactString: Value])
    /// Elements are unique (by strict equality); order is insertion order.
    case set([Value])
    case mapDiff(MapDiffValue)
    case path([String])
    /// Nanoseconds since the Unix epoch (Int128: the valid range, years 1–9999, exceeds Int64 nanoseconds).
    case timestamp(Int128)
    /// Nanoseconds.
    case duration(Int128)
    case latlng(Double, Double)
    case host(HostRef)
    /// A list-request wildcard whose segment is unknown; reading it is an error.
    case unbound
    case error(EvalError)
    /// A value not known yet (the size or hashes of an upload still on the wire, `RulesRequest.unknownFields`).
    /// Anything computed from it is unknown, except where the other operand decides alone (`false && x`,
    /// `true || x`), so a condition that ends up unknown could go either way once the value is known.
    case unknown

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .bytes: "bytes"
        case .list: "list"
        case .map, .host: "map"
        case .set: "set"
        case .mapDiff: "map_diff"
        case .path: "path"
        case .timestamp: "timestamp"
        case .duration: "duration"
        case .latlng: "latlng"
        case .unbound: "unbound"
        case .error: "error"
        case .unknown: "unknown"
        }
    }

    var isError: Bool { if case .error = self { true } else { false } }

    var isUnknown: Bool { if case .unknown = self { true } else { false } }

    static func fail(_ message: String) -> Value { .error(EvalError(message: message)) }

    static func unsupported(_ op: String, _ operands: Value...) -> Value {
        .fail("Unsupported operation error. Received: \(operands.map(\.typeName).joined(separator: " \(op) "))")
    }
}

/// Why an expression did not produce a value.
struct EvalError: Sendable, Error, Equatable {
    var message: String
}

/// Result of `map.diff(other)`: receiver is "new", argument is "old".
struct MapDiffValue: Sendable {
    var new: [ExactString: Value]
    var old: [ExactString: Value]
}

// MARK: Equality and ordering

extension Value {
    /// `==` at the top level: values of different types are unequal, except int and float which compare
    /// numerically. Inside lists and maps comparison is strict (`[1] == [1.0]` is false).
    static func looseEquals(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.int(let x), .float(let y)): return Double(x) == y
        case (.float(let x), .int(let y)): return x == Double(y)
        default: return strictEquals(a, b)
        }
    }

    static func strictEquals(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.float(let x), .float(let y)): return x == y
        case (.string(let x), .string(let y)): return x.sameBytes(y)
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.list(let x), .list(let y)):
            guard x.count == y.count else { return false }
            for i in x.indices where !strictEquals(x[i], y[i]) { return false }
            return true
        case (.map(let x), .map(let y)):
            guard x.count == y.count else { return false }
            for (k, v) in x {
                guard let w = y[k], strictEquals(v, w) else { return false }
            }
            return true
        case (.set(let x), .set(let y)):
            guard x.count == y.count else { return false }
            return x.allSatisfy { e in y.contains { strictEquals(e, $0) } }
        case (.path(let x), .path(let y)): return x.bytesEqual(y)
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.duration(let x), .duration(let y)): return x == y
        case (.latlng(let a1, let b1), .latlng(let a2, let b2)): return a1 == a2 && b1 == b2
        default: return false
        }
    }

    /// Ordering for `<` etc.: numbers (mixed allowed), strings (UTF-16 order, like Java), timestamps,
    /// durations. Returns nil for anything else (an error for the caller).
    static func compare(_ a: Value, _ b: Value) -> Int? {
        func cmp<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (a, b) {
        case (.int(let x), .int(let y)): return cmp(x, y)
        case (.int(let x), .float(let y)): return y.isNaN ? nil : cmp(Double(x), y)
        case (.float(let x), .int(let y)): return x.isNaN ? nil : cmp(x, Double(y))
        case (.float(let x), .float(let y)): return x.isNaN || y.isNaN ? nil : cmp(x, y)
        case (.string(let x), .string(let y)): return compareUTF16(x, y)
        case (.timestamp(let x), .timestamp(let y)): return cmp(x, y)
        case (.duration(let x), .duration(let y)): return cmp(x, y)
        default: return nil
        }
    }

    /// Java's `String.compareTo`: UTF-16 code unit order (which differs from scalar order above U+FFFF:
    /// surrogates D800–DFFF sort below U+E000–U+FFFF).
    static func compareUTF16(_ x: String, _ y: String) -> Int {
        var a = x.utf16.makeIterator(), b = y.utf16.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let p?, let q?): if p != q { return p < q ? -1 : 1 }
            }
        }
    }

    /// The `/`-separated segments of `text`, empty ones dropped, split on the `/` byte (a `Character` split would
    /// miss a `/` followed by a combining mark, which forms one grapheme cluster with it).
    static func pathSegments(_ text: String) -> [String] {
        text.bytesSplit(separator: UInt8(ascii: "/"))
    }

    /// Map keys in Java string order (what `keys()`, `values()` and `diff()` sets list).
    static func sortedKeys(_ map: [ExactString: Value]) -> [String] {
        map.keys.map(\.string).sorted { compareUTF16($0, $1) < 0 }
    }

    /// Appends `element` to a set's storage unless an equal element is present.
    static func setInsert(_ element: Value, into elements: inout [Value]) {
        if !elements.contains(where: { strictEquals($0, element) }) { elements.append(element) }
    }
}

// MARK: Rendering (debug(), explain, string())

extension Value {
    /// A readable rendering used by `debug()` and explanations.
    var rendered: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let d): return Value.formatFloat(d)
        case .string(let s): return "'" + s + "'"
        case .bytes(let b): return "b'" + b.map { String(format2hex: $0) }.joined() + "'"
        case .list(let l): return "[" + l.map(\.rendered).joined(separator: ", ") + "]"
        case .set(let l): return "set(" + l.map(\.rendered).joined(separator: ", ") + ")"
        case .map(let m):
            return "{" + Value.sortedKeys(m).map { "'\($0)': \(m[ExactString($0)]!.rendered)" }.joined(separator: ", ")
                + "}"
        case .mapDiff: return "map_diff"
        case .path(let p): return "path('/" + p.joined(separator: "/") + "')"
        case .timestamp(let t): return "timestamp(" + TimeMath.format(t) + ")"
        case .duration(let d): return "duration(\(TimeMath.formatDuration(d)))"
        case .latlng(let a, let b): return "latlng(\(a), \(b))"
        case .host(let h): return "<\(h.name)>"
        case .unbound: return "<unbound>"
        case .unknown: return "<not known yet>"
        case .error(let e): return "error(\(e.message))"
        }
    }

    /// Java's `Double.toString` (the rules runtime is Java): `2.0`, `0.5`, `1.0E7`, `1.0E-4`, `NaN`, `Infinity`.
    static func formatFloat(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == 0 { return d.sign == .minus ? "-0.0" : "0.0" }
        let magnitude = abs(d)
        let sign = d < 0 ? "-" : ""
        let text = "\(magnitude)"  // shortest round-trip digits
        if magnitude >= 1e-3, magnitude < 1e7 { return sign + text }
        // Scientific: d.dddE<exp> from Swift's digits and exponent.
        // grapheme-ok: Swift's own rendering of a Double is ASCII
        let parts = text.split(separator: "e")
        let mantissa = parts[0]
        var exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let point =
            mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) } ?? mantissa.count
        var digits = Array(mantissa.filter { $0 != "." })
        var leading = 0
        while digits.first == "0" { digits.removeFirst(); leading += 1 }
        while digits.count > 1, digits.last == "0" { digits.removeLast() }
        exponent += point - 1 - leading
        let rest = digits.count > 1 ? String(digits[1...]) : "0"
        return sign + String(digits[0]) + "." + rest + "E" + String(exponent)
    }
}

extension String {
    init(format2hex byte: UInt8) {
        let digits = Array("0123456789ABCDEF")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}
