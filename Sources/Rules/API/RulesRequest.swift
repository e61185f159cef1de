public import PortcullisCore

/// The rules methods: `read` covers get+list, `write` covers create+update+delete.
public enum RulesMethod: String, Sendable, CaseIterable {
    case get, list, create, update, delete
}

/// Everything one authorization decision looks at.
///
/// - `path`: the object name; for `list` the folder being listed without its trailing `/` (`""` = bucket root).
/// - `resource`: the stored object (nil when absent; always nil for list).
/// - `requestResource`: the proposed object for create/update (nil for get/list/delete).
/// - `auth`: nil for anonymous callers.
public struct RulesRequest: Sendable {
    public var method: RulesMethod
    public var bucket: String
    public var path: String
    public var auth: Principal?
    public var time: Timestamp
    public var resource: ObjectMetadata?
    public var requestResource: ObjectMetadata?
    /// The list delimiter (`/` for the Firebase SDKs' list/listAll); informational.
    public var delimiter: String?
    /// Fields of `requestResource` not known yet: an upload judged at its head, before its bytes arrive. Their
    /// values in `requestResource` are ignored; a decision that hinges on them is `undetermined`.
    public var unknownFields: UnknownFields = []

    public init(
        method: RulesMethod, bucket: String, path: String, auth: Principal? = nil, time: Timestamp = .now(),
        resource: ObjectMetadata? = nil, requestResource: ObjectMetadata? = nil, delimiter: String? = nil
    ) {
        self.method = method
        self.bucket = bucket
        self.path = path
        self.auth = auth
        self.time = time
        self.resource = resource
        self.requestResource = requestResource
        self.delimiter = delimiter
    }
}

/// Fields of `request.resource` that can be unknown when a decision is made early (`RulesRequest.unknownFields`).
public struct UnknownFields: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let size = UnknownFields(rawValue: 1 << 0)
    public static let md5Hash = UnknownFields(rawValue: 1 << 1)
    public static let crc32c = UnknownFields(rawValue: 1 << 2)
}

/// The outcome of a decision. `explanation` is filled by `Ruleset.explain` (nil from `evaluate`).
///
/// `determined` is false when the request was not allowed but some `allow` condition depended on a field
/// listed in `RulesRequest.unknownFields`: once the field is known, the answer may be either. A request with
/// no unknown fields is always determined.
public struct RulesDecision: Sendable, Equatable {
    public let allowed: Bool
    public let determined: Bool
    public let explanation: String?

    public init(allowed: Bool, determined: Bool = true, explanation: String? = nil) {
        self.allowed = allowed
        self.determined = allowed || determined
        self.explanation = explanation
    }

    /// Denied whatever the unknown fields turn out to be.
    public var deniedForCertain: Bool { !allowed && determined }
}

/// One compile problem at `file:line:col` (column in UTF-8 bytes, 1-based).
public struct RulesDiagnostic: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int
    public let message: String

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "\(file):\(line):\(column): \(message)" }
}

/// The Rules module's error: a ruleset that does not compile, with every problem found.
public struct RulesCompileError: Error, Sendable, CustomStringConvertible {
    public let diagnostics: [RulesDiagnostic]

    public init(diagnostics: [RulesDiagnostic]) { self.diagnostics = diagnostics }

    /// One `file:line:col: message` per line.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
