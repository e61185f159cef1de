import PortcullisCore

/// The standard library (docs/rules-language.md): method dispatch by receiver type and the global/namespaced functions.
/// Arguments arrive evaluated, error-free and concrete (no host values).
enum Library {
    static func method(_ m: Method, _ receiver: Value, _ args: [Value], _ regex: CompiledRegex?) -> Value {
        switch receiver {
        case .string(let s): return stringMethod(m, s, args, regex)
        case .list(let l): return listMethod(m, l, args)
        case .set(let l): return setMethod(m, l, args)
        case .map(let d): return mapMethod(m, d, args)
        case .mapDiff(let diff): return mapDiffMethod(m, diff)
        case .path(let p): return pathMethod(m, p, args)
        case .timestamp(let t): return timestampMethod(m, t)
        case .duration(let d): return durationMethod(m, d)
        case .bytes(let b): return bytesMethod(m, b)
        case .latlng(let lat, let lng): return latlngMethod(m, lat, lng, args)
        case .null: return .fail("Null value error. Cannot call \(m.rawValue)() on null.")
        default: return notFound(m, receiver)
        }
    }

    static func notFound(_ m: Method, _ receiver: Value) -> Value {
        .fail("Function not found error: Name: [\(m.rawValue)] on a value of type \(receiver.typeName).")
    }

    static func wrongArgument(_ m: Method, _ expected: String, _ got: Value) -> Value {
        .fail("Unsupported operation error. \(m.rawValue)() expects \(expected), received \(got.typeName).")
    }

    // MARK: Global and namespaced functions

    static func builtin(_ b: Builtin, _ args: [Value]) -> Value {
        switch b {
        case .int: return toInt(args[0])
        case .float: return toFloat(args[0])
        case .string: return toString(args[0])
        case .bool:
            switch args[0] {
            case .bool: return args[0]
            case .string("true"): return .bool(true)
            case .string("false"): return .bool(false)
            default: return .fail("bool() cannot convert \(args[0].rendered)")
            }
        case .path:
            switch args[0] {
            case .string(let s): return .path(Value.pathSegments(s))
            case .path: return args[0]
            default: return .fail("path() expects a string, received \(args[0].typeName)")
            }
        case .mathAbs:
            switch args[0] {
            case .int(let i): return i == Int64.min ? .fail("integer overflow") : .int(abs(i))
            case .float(let d): return .float(abs(d))
            default: return .fail("math.abs expects a number")
            }
        case .mathCeil, .mathFloor, .mathRound:
            guard let d = args[0].asDouble else { return .fail("\(b.rawValue) expects a number") }
            let r: Double =
                switch b {
                case .mathCeil: d.rounded(.up)
                case .mathFloor: d.rounded(.down)
                default: (d + 0.5).rounded(.down)  // half up: round(2.5) == 3, round(-2.5) == -2
                }
            guard r.isFinite, r >= -9.2e18, r <= 9.2e18 else { return .fail("\(b.rawValue): value out of int range") }
            return .int(Int64(r))
        case .mathIsInfinite:
            guard let d = args[0].asDouble else { return .fail("math.isInfinite expects a number") }
            return .bool(d.isInfinite)
        case .mathIsNaN:
            guard let d = args[0].asDouble else { return .fail("math.isNaN expects a number") }
            return .bool(d.isNaN)
        case .mathPow:
            guard let x = args[0].asDouble, let y = args[1].asDouble else { return .fail("math.pow expects numbers") }
            return .float(MathShim.pow(x, y))
        case .mathSqrt:
            guard let x = args[0].asDouble else { return .fail("math.sqrt expects a number") }
            return .float(x.squareRoot())
        case .timestampDate: return timestampDate(args)
        case .timestampValue:
            guard case .int(let ms) = args[0] else {
                return .fail("timestamp.value expects an int (epoch milliseconds)")
            }
            return TimeMath.checkedTimestamp(Int128(ms) * 1_000_000)
        case .durationValue: return durationValue(args)
        case .durationTime:
            var total: Int128 = 0
            let scales: [Int128] = [3_600_000_000_000, 60_000_000_000, 1_000_000_000, 1]
            for (i, a) in args.enumerated() {
                guard case .int(let v) = a else { return .fail("duration.time expects 4 ints") }
                total += Int128(v) * scales[i]
            }
            return TimeMath.checkedDuration(total)
        case .durationAbs:
            guard case .duration(let d) = args[0] else { return .fail("duration.abs expects a duration") }
            return .duration(d < 0 ? -d : d)
        case .latlngValue:
            guard let lat = args[0].asDouble, let lng = args[1].asDouble else {
                return .fail("latlng.value expects numbers")
            }
            guard (-90...90).contains(lat), (-180...180).contains(lng) else {
                return .fail("latlng.value: out of range")
            }
            return .latlng(lat, lng)
        case .hashingCrc32, .hashingCrc32c, .hashingMd5, .hashingSha256:
            let input: [UInt8]
            switch args[0] {
            case .string(let s): input = Array(s.utf8)
            case .bytes(let bytes): input = bytes
            default: return .fail("\(b.rawValue) expects bytes or a string")
            }
            switch b {
            case .hashingCrc32: return .bytes(Hashing.bigEndian(Hashing.crc32(input)))
            case .hashingCrc32c: return .bytes(Hashing.bigEndian(Hashing.crc32c(input)))
            case .hashingMd5: return .bytes(Hashing.md5(input))
            default: return .bytes(Hashing.sha256(input))
            }
        case .debug, .firestoreGet, .firestoreExists:
            return .fail("\(b.rawValue) is handled by the evaluator")
        }
    }

    static func toInt(_ v: Value) -> Value {
        switch v {
        case .int: return v
        case .float(let d):
            guard d.isFinite, d > -9.3e18, d < 9.3e18 else {
                return .fail("int(): \(Value.formatFloat(d)) is out of range")
            }
            let t = d.rounded(.towardZero)
            guard let i = Int64(exactly: t) else { return .fail("int(): \(Value.formatFloat(d)) is out of range") }
            return .int(i)
        case .string(let s):
            guard let i = Int64(s) else { return .fail("int(): cannot parse '\(s)'") }
            return .int(i)
        default: return .fail("int() cannot convert a \(v.typeName)")
        }
    }

    static func toFloat(_ v: Value) -> Value {
        switch v {
        case .float: return v
        case .int(let i): return .float(Double(i))
        case .string(let s):
            let t = s.trimmingASCIIWhitespace()
            guard !t.isEmpty, let d = Double(t) else { return .fail("float(): cannot parse '\(s)'") }
            return .float(d)
        default: return .fail("float() cannot convert a \(v.typeName)")
        }
    }

    static func toString(_ v: Value) -> Value {
        switch v {
        case .string: return v
        case .null: return .string("null")
        case .bool(let b): return .string(b ? "true" : "false")
        case .int(let i): return .string(String(i))
        case .float(let d): return .string(Value.formatFloat(d))
        case .path(let p): return .string(p.joined(separator: "/"))
        case .timestamp(let t): return .string(TimeMath.format(t))
        case .duration(let d): return .string(TimeMath.formatDuration(d))
        default: return .fail("string() cannot convert a \(v.typeName)")
        }
    }

    static func timestampDate(_ args: [Value]) -> Value {
        guard case .int(let y) = args[0], case .int(let m) = args[1], case .int(let d) = args[2] else {
            return .fail("timestamp.date expects 3 ints")
        }
        guard (1...9999).contains(y), (1...12).contains(m), d >= 1, d <= TimeMath.daysInMonth(y, m) else {
            return .fail("timestamp.date: invalid date \(y)-\(m)-\(d)")
        }
        return .timestamp(Int128(TimeMath.days(year: y, month: m, day: d)) * 86_400 * TimeMath.nanosPerSecond)
    }

    static func durationValue(_ args: [Value]) -> Value {
        guard case .int(let n) = args[0], case .string(let unit) = args[1] else {
            return .fail("duration.value expects (int, string)")
        }
        let scale: Int128
        switch unit {
        case "w": scale = 7 * 86_400 * TimeMath.nanosPerSecond
        case "d": scale = 86_400 * TimeMath.nanosPerSecond
        case "h": scale = 3_600 * TimeMath.nanosPerSecond
        case "m": scale = 60 * TimeMath.nanosPerSecond
        case "s": scale = TimeMath.nanosPerSecond
        case "ms": scale = 1_000_000
        case "ns": scale = 1
        default: return .fail("duration.value: unknown unit '\(unit)' (expected w, d, h, m, s, ms or ns)")
        }
        return TimeMath.checkedDuration(Int128(n) * scale)
    }
}
