/// Who is asking: the verified identity the rules see as `request.auth`.
///
/// Anonymous callers have no Principal at all (`Principal?` is nil) — that is not an error; the rules decide.
public struct Principal: Sendable, Equatable {
    /// `request.auth.uid`: the token's `sub` (Firebase ID tokens also carry it as `user_id`).
    public let uid: String
    /// Every claim of the verified token: `request.auth.token`.
    public let claims: [String: JSONValue]
    /// The admin key's holder: bypasses rules and may manage download tokens.
    public let isAdmin: Bool

    public init(uid: String, claims: [String: JSONValue], isAdmin: Bool = false) {
        self.uid = uid
        self.claims = claims
        self.isAdmin = isAdmin
    }

    public static let admin = Principal(uid: "admin", claims: [:], isAdmin: true)

    /// Same uid bytes, same claims (strings by bytes), same admin flag.
    public static func == (a: Principal, b: Principal) -> Bool {
        a.isAdmin == b.isAdmin && a.uid.bytesEqual(b.uid) && JSONValue.object(a.claims) == JSONValue.object(b.claims)
    }
}
