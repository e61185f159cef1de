internal import PortcullisCore

extension Library {
    /// Elements of a list or set argument.
    static func elements(_ v: Value) -> [Value]? {
        switch v {
        case .list(let l), .set(let l): l
        default: nil
        }
    }

    static func has(_ items: [Value], _ e: Value) -> Bool { items.contains { Value.looseEquals($0, e) } }

    static func listMethod(_ m: Method, _ l: [Value], _ args: [Value]) -> Value {
        switch m {
        case .size: return .int(Int64(l.count))
        case .join:
            guard case .string(let sep) = args[0] else { return wrongArgument(m, "a string separator", args[0]) }
            var parts: [String] = []
            for e in l {
                guard case .string(let s) = e else {
                    return .fail("join() needs a list of strings, found \(e.typeName)")
                }
                parts.append(s)
            }
            let out = parts.joined(separator: sep)
            return out.utf8.count <= Limits.maxStringBytes ? .string(out) : .fail("string too long")
        case .hasAll, .hasAny, .hasOnly, .removeAll:
            guard let other = elements(args[0]) else { return wrongArgument(m, "a list or set", args[0]) }
            return membership(m, l, other, asSet: false)
        case .concat:
            guard case .list(let other) = args[0] else { return wrongArgument(m, "a list", args[0]) }
            guard l.count + other.count <= Limits.maxValueElements else { return .fail("list too long") }
            return .list(l + other)
        case .toSet:
            var out: [Value] = []
            for e in l { Value.setInsert(e, into: &out) }
            return .set(out)
        default:
            return notFound(m, .list(l))
        }
    }

    static func membership(_ m: Method, _ l: [Value], _ other: [Value], asSet: Bool) -> Value {
        switch m {
        case .hasAll: return .bool(other.allSatisfy { has(l, $0) })
        case .hasAny: return .bool(other.contains { has(l, $0) })
        case .hasOnly: return .bool(l.allSatisfy { has(other, $0) })
        case .removeAll:
            let kept = l.filter { !has(other, $0) }
            return asSet ? .set(kept) : .list(kept)
        default: return .fail("internal: membership \(m.rawValue)")
        }
    }

    static func setMethod(_ m: Method, _ s: [Value], _ args: [Value]) -> Value {
        switch m {
        case .size: return .int(Int64(s.count))
        case .hasAll, .hasAny, .hasOnly:
            guard let other = elements(args[0]) else { return wrongArgument(m, "a list or set", args[0]) }
            return membership(m, s, other, asSet: true)
        case .union:
            guard let other = elements(args[0]) else { return wrongArgument(m, "a set", args[0]) }
            guard s.count + other.count <= Limits.maxValueElements else { return .fail("set too large") }
            var out = s
            for e in other { Value.setInsert(e, into: &out) }
            return .set(out)
        case .intersection:
            guard let other = elements(args[0]) else { return wrongArgument(m, "a set", args[0]) }
            return .set(s.filter { e in other.contains { Value.strictEquals($0, e) } })
        case .difference:
            guard let other = elements(args[0]) else { return wrongArgument(m, "a set", args[0]) }
            return .set(s.filter { e in !other.contains { Value.strictEquals($0, e) } })
        default:
            return notFound(m, .set(s))
        }
    }

    static func mapMethod(_ m: Method, _ d: [ExactString: Value], _ args: [Value]) -> Value {
        switch m {
        case .size: return .int(Int64(d.count))
        case .keys: return .list(Value.sortedKeys(d).map(Value.string))
        case .values: return .list(Value.sortedKeys(d).map { d[ExactString($0)]! })
        case .get:
            switch args[0] {
            case .string(let k): return d[ExactString(k)] ?? args[1]
            case .list(let path):
                var current = Value.map(d)
                for key in path {
                    guard case .string(let k) = key else { return .fail("get(): key path must be a list of strings") }
                    guard case .map(let cm) = current, let next = cm[ExactString(k)] else { return args[1] }
                    current = next
                }
                return current
            default:
                return wrongArgument(m, "a string key or a list of keys", args[0])
            }
        case .diff:
            guard case .map(let old) = args[0] else { return wrongArgument(m, "a map", args[0]) }
            return .mapDiff(MapDiffValue(new: d, old: old))
        default:
            return notFound(m, .map(d))
        }
    }

    static func mapDiffMethod(_ m: Method, _ diff: MapDiffValue) -> Value {
        func keys(_ include: (ExactString) -> Bool, from: [ExactString: Value]) -> Value {
            .set(Value.sortedKeys(from).filter { include(ExactString($0)) }.map(Value.string))
        }
        let new = diff.new, old = diff.old
        switch m {
        case .addedKeys: return keys({ old[$0] == nil }, from: new)
        case .removedKeys: return keys({ new[$0] == nil }, from: old)
        case .changedKeys: return keys({ k in old[k].map { !Value.strictEquals($0, new[k]!) } ?? false }, from: new)
        case .unchangedKeys: return keys({ k in old[k].map { Value.strictEquals($0, new[k]!) } ?? false }, from: new)
        case .affectedKeys:
            var out: [Value] = []
            for k in Value.sortedKeys(new).map({ ExactString($0) })
            where old[k].map({ !Value.strictEquals($0, new[k]!) }) ?? true {
                out.append(.string(k.string))
            }
            for k in Value.sortedKeys(old).map({ ExactString($0) }) where new[k] == nil {
                out.append(.string(k.string))
            }
            return .set(out)
        default: return notFound(m, .mapDiff(diff))
        }
    }

    static func pathMethod(_ m: Method, _ p: [String], _ args: [Value]) -> Value {
        switch m {
        case .size: return .int(Int64(p.count))
        case .bind:
            guard case .map(let bindings) = args[0] else { return wrongArgument(m, "a map", args[0]) }
            var out: [String] = []
            for seg in p {
                if seg.utf8.count >= 3, seg.bytesHasPrefix("$("), seg.bytesHasSuffix(")") {
                    let name = String(decoding: seg.utf8.dropFirst(2).dropLast(), as: UTF8.self)
                    guard case .string(let v)? = bindings[ExactString(name)] else {
                        return .fail("bind(): no string value for '\(name)'")
                    }
                    out.append(v)
                } else {
                    out.append(seg)
                }
            }
            return .path(out)
        default:
            return notFound(m, .path(p))
        }
    }

    static func timestampMethod(_ m: Method, _ t: Int128) -> Value {
        let p = TimeMath.parts(t)
        switch m {
        case .year: return .int(p.year)
        case .month: return .int(p.month)
        case .day: return .int(p.day)
        case .hours: return .int(p.hour)
        case .minutes: return .int(p.minute)
        case .seconds: return .int(p.second)
        case .nanos: return .int(p.nanos)
        case .dayOfWeek:
            // 1970-01-01 was a Thursday (4); ISO: Monday = 1 ... Sunday = 7.
            let w = ((p.daysSinceEpoch % 7) + 7 + 3) % 7
            return .int(w + 1)
        case .dayOfYear:
            return .int(p.daysSinceEpoch - TimeMath.days(year: p.year, month: 1, day: 1) + 1)
        case .date:
            return .timestamp(Int128(p.daysSinceEpoch) * 86_400 * TimeMath.nanosPerSecond)
        case .time:
            return .duration(t - Int128(p.daysSinceEpoch) * 86_400 * TimeMath.nanosPerSecond)
        case .toMillis:
            return .int(Int64(TimeMath.floorDivMod(t, 1_000_000).0))
        default:
            return notFound(m, .timestamp(t))
        }
    }

    static func durationMethod(_ m: Method, _ d: Int128) -> Value {
        switch m {
        case .seconds: return .int(Int64(d / TimeMath.nanosPerSecond))
        case .nanos: return .int(Int64(d % TimeMath.nanosPerSecond))
        default: return notFound(m, .duration(d))
        }
    }
}
