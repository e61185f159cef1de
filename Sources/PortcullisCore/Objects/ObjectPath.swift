/// A validated (bucket, object name) pair: the only way object names travel past the router, so every
/// backend is called only with names the object-name policy admits.
///
/// **Object-name policy** (one for every backend; README "Object names", docs/configuration.md):
/// - valid UTF-8 (a Swift `String` always is; a percent-decoded name that is not valid UTF-8 never becomes one),
///   1…1024 bytes;
/// - no NUL, carriage return or line feed: CR and LF are what GCS refuses; NUL is refused too, because a name is
///   a C string in too many places it travels (tools, logs, libraries), where `a\u{0}b` would read as `a`;
/// - not exactly `.` or `..`, and not starting with `.well-known/acme-challenge/` (GCS refuses these);
/// - not starting with `.portcullis-staging/`, which the gateway reserves for its own bookkeeping objects on
///   upstream buckets (`init(bucket:reservedName:)`).
/// Everything else is an ordinary name on every backend: other C0 and C1 control characters, DEL, U+FFFE and
/// U+FFFF, unassigned and astral code points, `..` and `//` inside a name. Names are byte strings: two
/// canonically equivalent spellings (`"caf\u{E9}"`, `"cafe\u{301}"`) are two different objects, so equality and
/// hashing here compare bytes. Names never become file-system paths.
public struct ObjectPath: Hashable, Sendable, CustomStringConvertible {
    public let bucket: String
    public let name: String

    /// Longest object name accepted, in UTF-8 bytes (the GCS limit).
    public static let maxNameBytes = 1024

    /// The gateway's own namespace on upstream buckets (staged writes, resumable records, spooled chunks).
    public static let reservedPrefix = ".portcullis-staging/"

    /// Names under this prefix are refused by GCS (its ACME HTTP-01 challenge path).
    static let acmeChallengePrefix = ".well-known/acme-challenge/"

    public init(bucket: String, name: String) throws(ObjectPathError) {
        guard !bucket.isEmpty else { throw .emptyBucket }
        try Self.validate(name: name)
        self.bucket = bucket
        self.name = name
    }

    /// A path for a backend's own bookkeeping object under `reservedPrefix`, which `init(bucket:name:)` refuses;
    /// the other rules of the policy still apply.
    public init(bucket: String, reservedName name: String) throws(ObjectPathError) {
        guard !bucket.isEmpty else { throw .emptyBucket }
        guard name.bytesHasPrefix(Self.reservedPrefix) else { throw .reservedName }
        try Self.validateBytes(name)
        self.bucket = bucket
        self.name = name
    }

    /// Checks an object name against the policy above without building a path.
    public static func validate(name: String) throws(ObjectPathError) {
        try validateBytes(name)
        if name.bytesEqual(".") || name.bytesEqual("..") { throw .dotSegmentName }
        if name.bytesHasPrefix(acmeChallengePrefix) || name.bytesHasPrefix(reservedPrefix) { throw .reservedName }
    }

    private static func validateBytes(_ name: String) throws(ObjectPathError) {
        let count = name.utf8.count
        guard count > 0 else { throw .emptyName }
        guard count <= maxNameBytes else { throw .nameTooLong(bytes: count) }
        for byte in name.utf8 {
            switch byte {
            case 0x0A, 0x0D: throw .lineBreakInName
            case 0x00: throw .nulInName
            default: continue
            }
        }
    }

    public static func == (a: ObjectPath, b: ObjectPath) -> Bool {
        a.bucket.bytesEqual(b.bucket) && a.name.bytesEqual(b.name)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(bucket))
        hasher.combine(ExactString(name))
    }

    public var description: String { "\(bucket)/\(name)" }
}

/// Why a bucket or object name was refused.
public enum ObjectPathError: Error, Sendable, Equatable, CustomStringConvertible {
    case emptyBucket
    case emptyName
    case nameTooLong(bytes: Int)
    case lineBreakInName
    case nulInName
    /// The whole name is `.` or `..`.
    case dotSegmentName
    /// Under `.well-known/acme-challenge/` or the gateway's reserved `.portcullis-staging/`.
    case reservedName

    public var description: String {
        switch self {
        case .emptyBucket: "bucket name is empty"
        case .emptyName: "object name is empty"
        case .nameTooLong(let bytes): "object name is \(bytes) bytes; the limit is \(ObjectPath.maxNameBytes)"
        case .lineBreakInName: "object name contains a carriage return or line feed"
        case .nulInName: "object name contains a NUL character"
        case .dotSegmentName: "object names '.' and '..' are not allowed"
        case .reservedName:
            "object names under \(ObjectPath.acmeChallengePrefix) or \(ObjectPath.reservedPrefix) are reserved"
        }
    }
}
