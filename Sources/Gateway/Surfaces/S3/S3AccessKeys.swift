public import PortcullisCore
import Synchronization

/// One access key of `--s3-keys`: its id, its secret and whom it acts as — the admin (rules bypassed) or a uid
/// with claims, judged by the rules as that user.
public struct S3AccessKey: Sendable {
    public let id: String
    let secret: [UInt8]
    public let principal: Principal

    public init(id: String, secret: [UInt8], principal: Principal) {
        self.id = id
        self.secret = secret
        self.principal = principal
    }
}

/// The access keys the S3 surface honours, replaced as a whole when `--s3-keys` is reloaded (SIGHUP). Ids are
/// matched by their bytes.
public final class S3AccessKeyStore: Sendable {
    private let keys = Mutex<[S3AccessKey]>([])

    public init(_ keys: [S3AccessKey] = []) { self.keys.withLock { $0 = keys } }

    public func replace(with keys: [S3AccessKey]) { self.keys.withLock { $0 = keys } }

    public var count: Int { keys.withLock { $0.count } }

    func key(id: some StringProtocol) -> S3AccessKey? { keys.withLock { list in list.first { $0.id.bytesEqual(id) } } }
}

/// The `--s3-keys` file: `{"keys":[{"id","secret","admin":true} | {"id","secret","uid","claims":{…}}]}`.
public enum S3AccessKeysFile {
    public struct Problem: Error, Sendable {
        public let message: String
        public init(message: String) { self.message = message }
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [S3AccessKey] {
        let document: JSONValue
        do { document = try JSONValue.parse(bytes) } catch { throw Problem(message: "not JSON: \(error)") }
        guard let list = document["keys"]?.arrayValue else {
            throw Problem(message: "expected an object with a \"keys\" array")
        }
        var keys: [S3AccessKey] = []
        var seen = Set<ExactString>()
        for (index, entry) in list.enumerated() {
            func problem(_ text: String) -> Problem { Problem(message: "keys[\(index)]: \(text)") }
            guard let id = entry["id"]?.stringValue, !id.isEmpty else { throw problem("id must be a non-empty string") }
            guard !id.bytesEqual(S3SessionToken.accessKeyID) else {
                throw problem("id \(id) is reserved for session tokens")
            }
            guard let secret = entry["secret"]?.stringValue, secret.utf8.count >= 8 else {
                throw problem("secret must be a string of at least 8 bytes")
            }
            guard seen.insert(ExactString(id)).inserted else { throw problem("id \(id) appears twice") }
            let principal: Principal
            if entry["admin"]?.boolValue == true {
                guard entry["uid"] == nil, entry["claims"] == nil else {
                    throw problem("an admin key has no uid or claims")
                }
                principal = .admin
            } else {
                guard let uid = entry["uid"]?.stringValue, !uid.isEmpty else {
                    throw problem("a key is either \"admin\": true or has a non-empty uid")
                }
                var claims = entry["claims"]?.objectValue ?? [:]
                if entry["claims"] != nil, entry["claims"]?.objectValue == nil {
                    throw problem("claims must be an object")
                }
                claims[exactly: "sub"] = .string(uid)
                principal = Principal(uid: uid, claims: claims, credentialDigest: freshIdentity())
            }
            keys.append(S3AccessKey(id: id, secret: Array(secret.utf8), principal: principal))
        }
        return keys
    }

    /// The `credentialDigest` of a loaded key's principal: 256 random bits drawn once per key per load. The
    /// rules' decision memo caches answers per digest, which must stand for one uid and one set of claims; a
    /// key's are fixed as loaded, and a reload draws new digests, so answers cached for the old claims are never
    /// served for new ones. Without a digest every request signed with the key evaluated the rules anew.
    private static func freshIdentity() -> CredentialDigest {
        var random = SystemRandomNumberGenerator()
        return CredentialDigest(a: random.next(), b: random.next(), c: random.next(), d: random.next())
    }
}

/// A user's JWT as the session token: with this access key id (and this secret, which is public: the signature
/// then only binds the request to its parts, the token authenticates), `X-Amz-Security-Token` carries a Firebase
/// ID token and the request runs as its user, under the rules.
public enum S3SessionToken {
    public static let accessKeyID = "portcullis-session"
    public static let secret = "portcullis-session"
}
