/// Global and namespaced library functions, resolved at compile time.
enum Builtin: String, CaseIterable, Sendable {
    case int, float, string, bool, path, debug
    case mathAbs = "math.abs", mathCeil = "math.ceil", mathFloor = "math.floor", mathRound = "math.round"
    case mathIsInfinite = "math.isInfinite", mathIsNaN = "math.isNaN", mathPow = "math.pow", mathSqrt = "math.sqrt"
    case timestampDate = "timestamp.date", timestampValue = "timestamp.value"
    case durationValue = "duration.value", durationTime = "duration.time", durationAbs = "duration.abs"
    case latlngValue = "latlng.value"
    case hashingCrc32 = "hashing.crc32", hashingCrc32c = "hashing.crc32c", hashingMd5 = "hashing.md5"
    case hashingSha256 = "hashing.sha256"
    case firestoreGet = "firestore.get", firestoreExists = "firestore.exists"

    var arity: Int {
        switch self {
        case .mathPow, .durationValue, .latlngValue: 2
        case .timestampDate: 3
        case .durationTime: 4
        default: 1
        }
    }

    /// Namespace identifiers: usable only as `ns.function(...)`, never as values.
    static let namespaces: Set<String> = ["math", "timestamp", "duration", "latlng", "hashing", "firestore"]

    /// Firestore-only globals that must be unknown in Storage rules.
    static let firestoreOnlyGlobals: Set<String> = ["get", "exists", "getAfter", "existsAfter"]
}

/// Methods by name. A name maps to one arity whatever the receiver type.
enum Method: String, CaseIterable, Sendable {
    case size, matches, split, replace, lower, upper, trim, toUtf8
    case join, hasAll, hasAny, hasOnly, concat, removeAll, toSet
    case keys, values, get, diff
    case addedKeys, removedKeys, changedKeys, unchangedKeys, affectedKeys
    case union, intersection, difference
    case bind
    case year, month, day, hours, minutes, seconds, nanos, dayOfWeek, dayOfYear, date, time, toMillis
    case toBase64, toHexString
    case distance, latitude, longitude

    var arity: Int {
        switch self {
        case .matches, .split, .join, .hasAll, .hasAny, .hasOnly, .concat, .removeAll, .diff, .union,
            .intersection, .difference, .bind, .distance:
            1
        case .replace, .get: 2
        default: 0
        }
    }

    /// Methods whose first argument is a regular expression (pre-compiled when it is a literal).
    var takesRegex: Bool { self == .matches || self == .split || self == .replace }
}
