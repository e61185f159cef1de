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
    /// The digest of the verified credential `uid` and `claims` were read from, when there was one (a JWT
    /// through `Authenticator`): equal digests mean equal uid and claims, so decisions may be cached on it.
    /// nil for principals assembled by hand (tests, the rules playground, upload tickets): never cached.
    public let credentialDigest: CredentialDigest?

    public init(
        uid: String, claims: [String: JSONValue], isAdmin: Bool = false,
        credentialDigest: CredentialDigest? = nil
    ) {
        self.uid = uid
        self.claims = claims
        self.isAdmin = isAdmin
        self.credentialDigest = credentialDigest
    }

    /// This principal, marked as read from the credential whose digest is `digest`.
    public func with(credentialDigest digest: CredentialDigest) -> Principal {
        Principal(uid: uid, claims: claims, isAdmin: isAdmin, credentialDigest: digest)
    }

    public static let admin = Principal(uid: "admin", claims: [:], isAdmin: true)

    /// Same uid bytes, same claims (strings by bytes), same admin flag (the credential digest is not compared:
    /// it records where the identity came from, not who it is).
    public static func == (a: Principal, b: Principal) -> Bool {
        a.isAdmin == b.isAdmin && a.uid.bytesEqual(b.uid) && JSONValue.object(a.claims) == JSONValue.object(b.claims)
    }
}
