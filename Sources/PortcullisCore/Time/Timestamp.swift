#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in UTC time with nanosecond resolution, cheap to create and format (no Foundation `Date` or
/// `DateFormatter` on the request path).
public struct Timestamp: Sendable, Hashable, Comparable {
    public var nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }
    public init(millisecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = millisecondsSinceEpoch &* 1_000_000 }

    public var millisecondsSinceEpoch: Int64 { nanosecondsSinceEpoch / 1_000_000 }
    public var secondsSinceEpoch: Int64 { nanosecondsSinceEpoch / 1_000_000_000 }

    /// Wall-clock now.
    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(nanosecondsSinceEpoch: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }

    /// RFC 3339 UTC with exactly three fractional digits (`2024-05-31T16:08:37.171Z`), the v0 wire format.
    public var rfc3339Milliseconds: String { format(fractionDigits: 3) }

    /// RFC 3339 UTC with the given number (0…9) of fractional digits.
    public func format(fractionDigits: Int) -> String {
        var out = [UInt8]()
        out.reserveCapacity(32)
        append(fractionDigits: fractionDigits, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the RFC 3339 form of `format(fractionDigits:)` to `out` (no intermediate String or arrays: the
    /// metadata JSON and the access log write two or three timestamps per request).
    public func append(fractionDigits: Int, to out: inout [UInt8]) {
        let (days, secondsOfDay) = floorDivide(secondsSinceEpochFloor, 86_400)
        let (year, month, day) = Self.civilFromDays(days)
        let nanos = nanosecondsSinceEpoch - secondsSinceEpochFloor * 1_000_000_000
        Self.putDigits(year, width: 4, &out); out.append(45)
        Self.putDigits(month, width: 2, &out); out.append(45)
        Self.putDigits(day, width: 2, &out)
        out.append(84)
        Self.putDigits(secondsOfDay / 3600, width: 2, &out); out.append(58)
        Self.putDigits(secondsOfDay / 60 % 60, width: 2, &out); out.append(58)
        Self.putDigits(secondsOfDay % 60, width: 2, &out)
        if fractionDigits > 0 {
            out.append(46)
            var fraction = nanos
            for _ in 0..<(9 - min(fractionDigits, 9)) { fraction /= 10 }
            Self.putDigits(fraction, width: min(fractionDigits, 9), &out)
        }
        out.append(90)
    }

    /// Appends the low `width` decimal digits of a non-negative `value`, zero-padded.
    /// Written low digit first by constant division, then reversed in place (a running power-of-ten divisor cost
    /// two hardware divisions per digit, several per cent of the access log's rendering).
    private static func putDigits(_ value: Int64, width: Int, _ out: inout [UInt8]) {
        let width = max(1, width)
        guard value >= 0 else { return putDigitsSlowly(value, width: width, &out) }
        var rest = value
        var low = out.count
        for _ in 0..<width {
            out.append(UInt8(truncatingIfNeeded: 48 &+ rest % 10))
            rest /= 10
        }
        var high = out.count - 1
        while low < high {
            out.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    /// `putDigits` for a negative value (outside the contract), kept byte for byte as it always was.
    private static func putDigitsSlowly(_ value: Int64, width: Int, _ out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor &*= 10 }
        var v = value
        while divisor > 0 {
            out.append(UInt8(truncatingIfNeeded: 48 + (v / divisor) % 10))
            v %= divisor
            divisor /= 10
        }
    }

    private static let weekdayNames: [StaticString] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let monthNames: [StaticString] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// IMF-fixdate for HTTP headers (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public var httpDate: String {
        var out = [UInt8]()
        out.reserveCapacity(29)
        appendHTTPDate(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the IMF-fixdate of `httpDate` to `out`.
    public func appendHTTPDate(to out: inout [UInt8]) {
        let (days, secondsOfDay) = floorDivide(secondsSinceEpochFloor, 86_400)
        let (year, month, day) = Self.civilFromDays(days)
        let weekday = Self.weekdayNames[Int(((days % 7) + 7) % 7)]
        let monthName = Self.monthNames[Int(month - 1)]
        out.append(contentsOf: UnsafeBufferPointer(start: weekday.utf8Start, count: 3))
        out.append(44); out.append(32)
        Self.putDigits(day, width: 2, &out); out.append(32)
        out.append(contentsOf: UnsafeBufferPointer(start: monthName.utf8Start, count: 3))
        out.append(32)
        if year > 9999 { out.append(contentsOf: String(year).utf8) } else { Self.putDigits(year, width: 4, &out) }
        out.append(32)
        Self.putDigits(secondsOfDay / 3600, width: 2, &out); out.append(58)
        Self.putDigits(secondsOfDay / 60 % 60, width: 2, &out); out.append(58)
        Self.putDigits(secondsOfDay % 60, width: 2, &out)
        out.append(contentsOf: " GMT".utf8)
    }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`); lower-case `t`/`z` accepted.
    public init?(rfc3339 text: some StringProtocol) {
        let parsed =
            text.utf8.withContiguousStorageIfAvailable(Self.rfc3339Nanoseconds)
            ?? Array(text.utf8).withUnsafeBufferPointer(Self.rfc3339Nanoseconds)
        guard let parsed else { return nil }
        nanosecondsSinceEpoch = parsed
    }

    /// `init(rfc3339:)` of text held as UTF-8 bytes (a JSON member read without a `String`).
    public init?(rfc3339UTF8 bytes: ArraySlice<UInt8>) {
        guard let parsed = bytes.withUnsafeBufferPointer(Self.rfc3339Nanoseconds) else { return nil }
        nanosecondsSinceEpoch = parsed
    }

    /// Nanoseconds since the epoch of the RFC 3339 time `b`, or nil when `b` is not one this type can hold.
    private static func rfc3339Nanoseconds(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        func digits(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in start..<(start + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, let year = digits(0, 4), b[4] == 45, let month = digits(5, 2), b[7] == 45,
            let day = digits(8, 2), b[10] == 84 || b[10] == 116, let hour = digits(11, 2), b[13] == 58,
            let minute = digits(14, 2), b[16] == 58, let second = digits(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var nanos: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale: Int64 = 100_000_000
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                nanos += Int64(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offsetSeconds: Int64 = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 58,
            let om = digits(i + 4, 2)
        {
            offsetSeconds = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        // Nanoseconds since 1970 in an Int64 reach only 1677-09-21…2262-04-11: a time outside that is not a
        // timestamp this type can hold (it used to trap on overflow: `If-Modified-Since` of year 9999).
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowAgain) = whole.addingReportingOverflow(nanos)
        guard !overflow, !overflowAgain else { return nil }
        return total
    }

    private var secondsSinceEpochFloor: Int64 { floorDivide(nanosecondsSinceEpoch, 1_000_000_000).0 }

    // Howard Hinnant's civil-date algorithms: exact for the proleptic Gregorian calendar. Public so the rules
    // library's timestamp fields use the same arithmetic.
    /// (year, month 1…12, day 1…31) of the day `z0` days after 1970-01-01.
    public static func civilFromDays(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Days from 1970-01-01 to the given civil date (negative before it).
    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

@inline(__always)
private func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    let q = a / b, r = a % b
    return r < 0 ? (q - 1, r + b) : (q, r)
}

/// Monotonic time for durations and timeouts (never goes backwards, unlike the wall clock).
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
