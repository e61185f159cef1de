public import Crypto
public import PortcullisCore

/// A service account Portcullis issued (`portcullis service-account create`): the public half of its key and
/// what its holder may do. Registered in the operator's accounts file (`--service-accounts`); the private key
/// lives only in the key file handed to the account's user.
public struct ServiceAccount: Sendable {
    /// `client_email` of the key file: the account's identity, the `iss` of its assertions, compared by bytes.
    public let email: String
    /// `private_key_id` of the key file: the `kid` its JWTs carry. A new key for the same email is a new id, so
    /// replacing the key revokes the access tokens the old one obtained.
    public let keyID: String
    public let publicKey: PublicKey
    public let grant: ServiceAccountGrant

    public init(email: String, keyID: String, publicKey: PublicKey, grant: ServiceAccountGrant) {
        self.email = email
        self.keyID = keyID
        self.publicKey = publicKey
        self.grant = grant
    }

    /// The principal the account's requests run as: its grant's, the admin one carrying the account's email as
    /// its `email` claim, so what it writes names the account as its owner (as Cloud Storage does).
    public var principal: Principal {
        guard case .admin = grant else { return grant.principal }
        return Principal(uid: Principal.admin.uid, claims: ["email": .string(email)], isAdmin: true)
    }
}

/// What a service account's requests act as: the admin (rules bypassed), or a principal with a uid and token
/// claims the operator chose, judged by the rules like any signed-in user.
public enum ServiceAccountGrant: Sendable, Equatable {
    case admin
    case principal(uid: String, claims: [String: JSONValue])

    /// The principal requests carrying this account's credentials run as. Claims are the configured ones with
    /// `sub` set to the uid (as a verified JWT's would be), so `request.auth.token.sub` and `request.auth.uid`
    /// agree.
    public var principal: Principal {
        switch self {
        case .admin: return .admin
        case .principal(let uid, let claims):
            var merged = claims
            merged["sub"] = .string(uid)
            return Principal(uid: uid, claims: merged)
        }
    }

    public static func == (a: ServiceAccountGrant, b: ServiceAccountGrant) -> Bool {
        switch (a, b) {
        case (.admin, .admin): return true
        case (.principal(let u1, let c1), .principal(let u2, let c2)):
            return u1.bytesEqual(u2) && JSONValue.object(c1) == JSONValue.object(c2)
        default: return false
        }
    }
}
