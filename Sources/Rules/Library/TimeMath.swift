import PortcullisCore

/// Calendar arithmetic for rules timestamps (ns since epoch, UTC, years 1–9999) and durations (ns).
enum TimeMath {
    static let nanosPerSecond: Int128 = 1_000_000_000
    static let minTimestamp: Int128 = -62_135_596_800 * nanosPerSecond
    static let maxTimestamp: Int128 = 253_402_300_799 * nanosPerSecond + 999_999_999
    static let maxDuration: Int128 = 315_576_000_000 * nanosPerSecond + 999_999_999

    static func checkedTimestamp(_ t: Int128) -> Value {
        (minTimestamp...maxTimestamp).contains(t) ? .timestamp(t) : .fail("timestamp out of range (years 1-9999)")
    }

    static func checkedDuration(_ d: Int128) -> Value {
        (-maxDuration...maxDuration).contains(d) ? .duration(d) : .fail("duration out of range")
    }

    /// Floor division and modulo (remainder has the divisor's sign).
    static func floorDivMod(_ a: Int128, _ b: Int128) -> (Int128, Int128) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    /// Civil date of a day count since the epoch (the shared algorithm in PortcullisCore's `Timestamp`).
    static func civil(fromDays z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let (year, month, day) = Timestamp.civilFromDays(z0)
        return (year, month, day)
    }

    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        Timestamp.daysFromCivil(year: year, month: month, day: day)
    }

    static func isLeap(_ y: Int64) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    struct Parts {
        var year, month, day, hour, minute, second, nanos, daysSinceEpoch: Int64
    }

    static func parts(_ t: Int128) -> Parts {
        let (secs, nanos) = floorDivMod(t, nanosPerSecond)
        let (days, sod) = floorDivMod(secs, 86_400)
        let (y, m, d) = civil(fromDays: Int64(days))
        let s = Int64(sod)
        return Parts(
            year: y, month: m, day: d, hour: s / 3600, minute: s / 60 % 60, second: s % 60,
            nanos: Int64(nanos), daysSinceEpoch: Int64(days))
    }

    static func format(_ t: Int128) -> String {
        let p = parts(t)
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        var out =
            "\(pad(p.year, 4))-\(pad(p.month, 2))-\(pad(p.day, 2))T\(pad(p.hour, 2)):\(pad(p.minute, 2)):\(pad(p.second, 2))"
        if p.nanos != 0 {
            var frac = pad(p.nanos, 9)
            while frac.hasSuffix("0") { frac.removeLast() }
            out += "." + frac
        }
        return out + "Z"
    }

    static func formatDuration(_ d: Int128) -> String {
        let (s, n) = (d / nanosPerSecond, d % nanosPerSecond)
        if n == 0 { return "\(s)s" }
        var frac = String(abs(Int64(n)))
        frac = String(repeating: "0", count: 9 - frac.count) + frac
        while frac.hasSuffix("0") { frac.removeLast() }
        return "\(d < 0 && s == 0 ? "-" : "")\(s).\(frac)s"
    }
}
