/// A validated (bucket, object name) pair: the only way object names travel past the router.
///
/// Names are arbitrary UTF-8 (1…1024 bytes, no CR or LF). They never become file-system paths, so `..`,
/// `%2e` and `//` are ordinary characters here; backends must treat the name as an opaque key.
public struct ObjectPath: Hashable, Sendable, CustomStringConvertible {
    public let bucket: String
    public let name: String

    /// Longest object name accepted, in UTF-8 bytes (the GCS limit).
    public static let maxNameBytes = 1024

    public init(bucket: String, name: String) throws(ObjectPathError) {
        guard !bucket.isEmpty else { throw .emptyBucket }
        try Self.validate(name: name)
        self.bucket = bucket
        self.name = name
    }

    /// Checks an object name against the rules above without building a path.
    public static func validate(name: String) throws(ObjectPathError) {
        let count = name.utf8.count
        guard count > 0 else { throw .emptyName }
        guard count <= maxNameBytes else { throw .nameTooLong(bytes: count) }
        for byte in name.utf8 where byte == 0x0A || byte == 0x0D {
            throw .lineBreakInName
        }
    }

    public var description: String { "\(bucket)/\(name)" }
}

/// Why a bucket or object name was refused.
public enum ObjectPathError: Error, Sendable, Equatable, CustomStringConvertible {
    case emptyBucket
    case emptyName
    case nameTooLong(bytes: Int)
    case lineBreakInName

    public var description: String {
        switch self {
        case .emptyBucket: "bucket name is empty"
        case .emptyName: "object name is empty"
        case .nameTooLong(let bytes): "object name is \(bytes) bytes; the limit is \(ObjectPath.maxNameBytes)"
        case .lineBreakInName: "object name contains a carriage return or line feed"
        }
    }
}
