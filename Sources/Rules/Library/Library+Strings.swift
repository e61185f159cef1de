#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

extension Library {
    static func stringMethod(_ m: Method, _ s: String, _ args: [Value], _ pre: CompiledRegex?) -> Value {
        switch m {
        case .size:
            return .int(Int64(s.utf16.count))
        case .lower:
            return .string(String(decoding: s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self))
        case .upper:
            return .string(String(decoding: s.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 32 : $0 }, as: UTF8.self))
        case .trim:
            // Java String.trim(): strips code points <= U+0020 at both ends.
            let u = s.unicodeScalars
            guard let start = u.firstIndex(where: { $0.value > 0x20 }) else { return .string("") }
            let end = u.lastIndex(where: { $0.value > 0x20 })!
            return .string(String(u[start...end]))
        case .toUtf8:
            return .bytes(Array(s.utf8))
        case .matches, .split, .replace:
            guard case .string(let pattern) = args[0] else {
                return wrongArgument(m, "a string regular expression", args[0])
            }
            let regex: CompiledRegex
            if let pre {
                regex = pre
            } else {
                switch CompiledRegex.compile(pattern) {
                case .success(let r): regex = r
                case .failure(let f): return .fail("invalid regular expression '\(pattern)': \(f.message)")
                }
            }
            switch m {
            case .matches:
                switch regex.wholeMatch(s) {
                case .some(let b): return .bool(b)
                case .none: return .fail("regular expression too costly for this input")
                }
            case .split:
                guard let parts = regex.split(s) else { return .fail("regular expression too costly for this input") }
                return .list(parts.map(Value.string))
            default:
                guard case .string(let replacement) = args[1] else {
                    return wrongArgument(m, "a string replacement", args[1])
                }
                guard let out = regex.replaceAll(s, with: replacement) else {
                    return .fail("regular expression too costly for this input")
                }
                guard out.utf8.count <= Limits.maxStringBytes else { return .fail("string too long") }
                return .string(out)
            }
        default:
            return notFound(m, .string(s))
        }
    }

    static func bytesMethod(_ m: Method, _ b: [UInt8]) -> Value {
        switch m {
        case .size: return .int(Int64(b.count))
        case .toBase64: return .string(Base64.encode(b, urlSafe: true))
        case .toHexString: return .string(b.map { String(format2hex: $0) }.joined())
        default: return notFound(m, .bytes(b))
        }
    }

    static func latlngMethod(_ m: Method, _ lat: Double, _ lng: Double, _ args: [Value]) -> Value {
        switch m {
        case .latitude: return .float(lat)
        case .longitude: return .float(lng)
        case .distance:
            guard case .latlng(let lat2, let lng2) = args[0] else { return wrongArgument(m, "a latlng", args[0]) }
            // Haversine on a sphere of mean Earth radius.
            let r = 6_371_008.8, rad = Double.pi / 180
            let dLat = (lat2 - lat) * rad, dLng = (lng2 - lng) * rad
            let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat * rad) * cos(lat2 * rad) * sin(dLng / 2) * sin(dLng / 2)
            return .float(2 * r * atan2(a.squareRoot(), (1 - a).squareRoot()))
        default: return notFound(m, .latlng(lat, lng))
        }
    }
}

/// Base64 (RFC 4648), standard or URL-safe alphabet, with padding.
enum Base64 {
    static func encode(_ bytes: [UInt8], urlSafe: Bool) -> String {
        let table = Array(
            (urlSafe
                ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/").utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [table[Int(n >> 18 & 63)], table[Int(n >> 12 & 63)], table[Int(n >> 6 & 63)], table[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [table[Int(n >> 18 & 63)], table[Int(n >> 12 & 63)], 61, 61]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [table[Int(n >> 18 & 63)], table[Int(n >> 12 & 63)], table[Int(n >> 6 & 63)], 61]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
