public import PortcullisCore

/// The rules method a v0 operation is judged as (rules.md §2.1): downloads and metadata reads are `get`,
/// uploads (overwrites included) `create`, metadata PATCH `update`.
public enum AccessMethod: String, Sendable, CaseIterable {
    case get, list, create, update, delete
}

/// Everything an access decision may look at. Built by the v0 handlers, judged by an `Authorizer`.
public struct AccessRequest: Sendable {
    public var method: AccessMethod
    public var bucket: String
    /// The object name; for `list`, the folder being listed without its trailing `/` (`""` for the root).
    public var path: String
    public var principal: Principal?
    /// The stored object (nil when absent, and always nil for list).
    public var resource: ObjectMetadata?
    /// The object as it would be after the request (uploads, PATCH); nil for get, list and delete.
    public var requestResource: ObjectMetadata?
    public var time: Timestamp
    /// The list delimiter, passed to rules for `list`.
    public var delimiter: String?

    public init(method: AccessMethod, bucket: String, path: String, principal: Principal?,
                resource: ObjectMetadata? = nil, requestResource: ObjectMetadata? = nil,
                time: Timestamp = .now(), delimiter: String? = nil) {
        self.method = method
        self.bucket = bucket
        self.path = path
        self.principal = principal
        self.resource = resource
        self.requestResource = requestResource
        self.time = time
        self.delimiter = delimiter
    }
}

public struct AccessDecision: Sendable, Equatable {
    public var allowed: Bool
    /// Which `match`/`allow` decided, or why nothing granted (for the access log and debug output).
    public var explanation: String?

    public init(allowed: Bool, explanation: String? = nil) {
        self.allowed = allowed
        self.explanation = explanation
    }
}

/// The authorization seam: every v0 operation asks this before touching storage (denial masks existence).
/// Admin principals and valid download tokens are let through by the handlers before it is asked.
public protocol Authorizer: Sendable {
    func authorize(_ request: AccessRequest) -> AccessDecision
}

/// Grants everything. For tests of handlers that are not about access control — never the server default
/// (with no rules file the server denies everything).
public struct AllowAllAuthorizer: Authorizer {
    public init() {}
    public func authorize(_ request: AccessRequest) -> AccessDecision {
        AccessDecision(allowed: true, explanation: "allow-all (test authorizer)")
    }
}

/// Denies everything: the server's stance when no rules file is configured.
public struct DenyAllAuthorizer: Authorizer {
    public init() {}
    public func authorize(_ request: AccessRequest) -> AccessDecision {
        AccessDecision(allowed: false, explanation: "no rules loaded: everything is denied")
    }
}
