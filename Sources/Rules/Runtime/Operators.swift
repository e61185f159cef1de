internal import PortcullisCore

/// Operator semantics (docs/rules-language.md): dynamic type checks, errors as values, 64-bit overflow is an error.
enum Operators {
    static func negate(_ v: Value) -> Value {
        switch v {
        case .int(let i):
            let (r, o) = Int64(0).subtractingReportingOverflow(i)
            return o ? .fail("integer overflow") : .int(r)
        case .float(let d): return .float(-d)
        case .duration(let d): return TimeMath.checkedDuration(-d)
        case .error: return v
        default: return .unsupported("-", v)
        }
    }

    static func isType(_ v: Value, _ t: TypeTest) -> Bool {
        switch (t, v) {
        case (.bool, .bool), (.int, .int), (.float, .float), (.number, .int), (.number, .float), (.string, .string),
            (.list, .list), (.map, .map), (.map, .host), (.timestamp, .timestamp), (.duration, .duration),
            (.path, .path), (.latlng, .latlng), (.bytes, .bytes), (.set, .set), (.null, .null),
            (.mapDiff, .mapDiff):
            true
        default:
            false
        }
    }

    static func arithmetic(_ op: BinaryOp, _ l: Value, _ r: Value) -> Value {
        switch op {
        case .lt, .le, .gt, .ge:
            guard let c = Value.compare(l, r) else { return .unsupported(op.rawValue, l, r) }
            switch op {
            case .lt: return .bool(c < 0)
            case .le: return .bool(c <= 0)
            case .gt: return .bool(c > 0)
            default: return .bool(c >= 0)
            }
        case .add: return add(l, r)
        case .sub: return subtract(l, r)
        case .mul, .div, .mod: return multiplicative(op, l, r)
        case .eq, .ne, .in: return .unsupported(op.rawValue, l, r)
        }
    }

    static func add(_ l: Value, _ r: Value) -> Value {
        switch (l, r) {
        case (.int(let a), .int(let b)):
            let (s, o) = a.addingReportingOverflow(b)
            return o ? .fail("integer overflow in +") : .int(s)
        case (.int(let a), .float(let b)): return .float(Double(a) + b)
        case (.float(let a), .int(let b)): return .float(a + Double(b))
        case (.float(let a), .float(let b)): return .float(a + b)
        case (.string(let a), .string(let b)):
            guard a.utf8.count + b.utf8.count <= Limits.maxStringBytes else { return .fail("string too long") }
            return .string(a + b)
        case (.bytes(let a), .bytes(let b)):
            guard a.count + b.count <= Limits.maxStringBytes else { return .fail("bytes too long") }
            return .bytes(a + b)
        case (.list(let a), .list(let b)):
            guard a.count + b.count <= Limits.maxValueElements else { return .fail("list too long") }
            return .list(a + b)
        case (.timestamp(let t), .duration(let d)), (.duration(let d), .timestamp(let t)):
            return TimeMath.checkedTimestamp(t + d)
        case (.duration(let a), .duration(let b)): return TimeMath.checkedDuration(a + b)
        default: return .unsupported("+", l, r)
        }
    }

    static func subtract(_ l: Value, _ r: Value) -> Value {
        switch (l, r) {
        case (.int(let a), .int(let b)):
            let (s, o) = a.subtractingReportingOverflow(b)
            return o ? .fail("integer overflow in -") : .int(s)
        case (.int(let a), .float(let b)): return .float(Double(a) - b)
        case (.float(let a), .int(let b)): return .float(a - Double(b))
        case (.float(let a), .float(let b)): return .float(a - b)
        case (.timestamp(let t), .duration(let d)): return TimeMath.checkedTimestamp(t - d)
        case (.timestamp(let a), .timestamp(let b)): return TimeMath.checkedDuration(a - b)
        case (.duration(let a), .duration(let b)): return TimeMath.checkedDuration(a - b)
        default: return .unsupported("-", l, r)
        }
    }

    static func multiplicative(_ op: BinaryOp, _ l: Value, _ r: Value) -> Value {
        switch (l, r) {
        case (.int(let a), .int(let b)):
            switch op {
            case .mul:
                let (p, o) = a.multipliedReportingOverflow(by: b)
                return o ? .fail("integer overflow in *") : .int(p)
            case .div:
                if b == 0 { return .fail("division by zero") }
                let (q, o) = a.dividedReportingOverflow(by: b)
                return o ? .fail("integer overflow in /") : .int(q)
            default:
                if b == 0 { return .fail("modulo by zero") }
                let (m, o) = a.remainderReportingOverflow(dividingBy: b)
                return o ? .fail("integer overflow in %") : .int(m)
            }
        case (.int, .float), (.float, .int), (.float, .float):
            let a = l.asDouble!, b = r.asDouble!
            switch op {
            case .mul: return .float(a * b)
            case .div: return .float(a / b)
            default: return .float(a.truncatingRemainder(dividingBy: b))
            }
        default:
            return .unsupported(op.rawValue, l, r)
        }
    }

    /// `x in collection`.
    static func contains(_ collection: Value, _ element: Value) -> Value {
        switch collection {
        case .list(let items), .set(let items):
            return .bool(items.contains { Value.looseEquals($0, element) })
        case .map(let m):
            guard case .string(let k) = element else { return .bool(false) }
            return .bool(m[ExactString(k)] != nil)
        default:
            return .unsupported("in", element, collection)
        }
    }

    static func index(_ base: Value, _ key: Value) -> Value {
        guard case .int(let i) = key else {
            return .fail("index must be an int, got \(key.typeName) (indexing a \(base.typeName))")
        }
        switch base {
        case .list(let items):
            guard i >= 0, i < items.count else { return .fail("index \(i) out of range for a list of \(items.count)") }
            return items[Int(i)]
        case .path(let segments):
            guard i >= 0, i < segments.count else {
                return .fail("index \(i) out of range for a path of \(segments.count)")
            }
            return .string(segments[Int(i)])
        case .string(let s):
            let units = Array(s.utf16)
            guard i >= 0, i < units.count else {
                return .fail("index \(i) out of range for a string of \(units.count)")
            }
            return .string(String(decoding: [units[Int(i)]], as: UTF16.self))
        case .bytes(let b):
            guard i >= 0, i < b.count else { return .fail("index \(i) out of range for bytes of \(b.count)") }
            return .int(Int64(b[Int(i)]))
        case .null:
            return .fail("Null value error. Cannot index null.")
        default:
            return .fail("cannot index a value of type \(base.typeName)")
        }
    }

    static func range(_ base: Value, _ lo: Value?, _ hi: Value?) -> Value {
        func bound(_ v: Value?, _ dflt: Int) -> Int? {
            guard let v else { return dflt }
            if case .int(let i) = v, i >= 0, i <= Int64(Int32.max) { return Int(i) }
            return nil
        }
        let count: Int
        switch base {
        case .list(let items): count = items.count
        case .path(let p): count = p.count
        case .string(let s): count = s.utf16.count
        case .bytes(let b): count = b.count
        default: return .fail("cannot take a range of a value of type \(base.typeName)")
        }
        guard let a = bound(lo, 0), let b = bound(hi, count), a <= b, b <= count else {
            return .fail("range out of bounds for a \(base.typeName) of size \(count)")
        }
        switch base {
        case .list(let items): return .list(Array(items[a..<b]))
        case .path(let p): return .path(Array(p[a..<b]))
        case .string(let s): return .string(String(decoding: Array(s.utf16)[a..<b], as: UTF16.self))
        case .bytes(let bytes): return .bytes(Array(bytes[a..<b]))
        default: return .fail("cannot take a range")
        }
    }
}

extension Value {
    var asDouble: Double? {
        switch self {
        case .int(let i): Double(i)
        case .float(let d): d
        default: nil
        }
    }
}
