public import Crypto
public import PortcullisCore

/// The accounts file the operator keeps (`--service-accounts FILE`): which service accounts exist, their public
/// keys and their grants. Pure: the executable reads and writes the bytes.
///
/// ```json
/// {"accounts": [
///   {"client_email": "ci@demo.iam.portcullis", "private_key_id": "…", "public_key": "-----BEGIN PUBLIC KEY-----…",
///    "admin": true},
///   {"client_email": "worker@demo.iam.portcullis", "private_key_id": "…", "public_key": "…",
///    "uid": "worker", "claims": {"role": "worker"}}
/// ]}
/// ```
/// Exactly one of `admin: true` or `uid` (with optional `claims`) per account; emails are unique by bytes.
/// Unknown members are ignored. Removing an entry revokes the account at the next reload.
public enum ServiceAccountsFile {
    /// Why a file was refused: the entry (by position) and what is wrong with it.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
        public init(message: String) { self.message = message }
    }

    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [ServiceAccount] {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw Problem(message: "not JSON: \(error)")
        }
        guard let list = document["accounts"]?.arrayValue else {
            throw Problem(message: "expected an object with an \"accounts\" array")
        }
        var accounts: [ServiceAccount] = []
        var seen = Set<ExactString>()
        for (index, entry) in list.enumerated() {
            let account = try parseEntry(entry, index: index)
            guard seen.insert(ExactString(account.email)).inserted else {
                throw Problem(message: "accounts[\(index)]: client_email \(account.email) appears twice")
            }
            accounts.append(account)
        }
        return accounts
    }

    private static func parseEntry(_ entry: JSONValue, index: Int) throws(Problem) -> ServiceAccount {
        func problem(_ text: String) -> Problem { Problem(message: "accounts[\(index)]: \(text)") }
        guard entry.objectValue != nil else { throw problem("not an object") }
        guard let email = entry["client_email"]?.stringValue, !email.isEmpty else {
            throw problem("client_email must be a non-empty string")
        }
        guard let keyID = entry["private_key_id"]?.stringValue, !keyID.isEmpty else {
            throw problem("private_key_id must be a non-empty string")
        }
        guard let pem = entry["public_key"]?.stringValue else { throw problem("public_key must be a PEM string") }
        let publicKey: PublicKey
        do {
            publicKey = try PublicKey(pem: pem)
        } catch {
            throw problem("public_key: \(error)")
        }
        guard case .rsa(let bits) = publicKey.kind, bits >= 2048 else {
            throw problem("public_key must be an RSA key of at least 2048 bits")
        }
        let admin = entry["admin"]?.boolValue ?? false
        let uid = entry["uid"]
        let grant: ServiceAccountGrant
        if admin {
            guard uid == nil, entry["claims"] == nil else { throw problem("an admin account has no uid or claims") }
            grant = .admin
        } else {
            guard let uid = uid?.stringValue, !uid.isEmpty, uid.unicodeScalars.count <= 128 else {
                throw problem("needs \"admin\": true or a uid of 1-128 characters")
            }
            var claims: [String: JSONValue] = [:]
            if let value = entry["claims"], !value.isNull {
                guard let object = value.objectValue else { throw problem("claims must be an object") }
                claims = object
            }
            grant = .principal(uid: uid, claims: claims)
        }
        return ServiceAccount(email: email, keyID: keyID, publicKey: publicKey, grant: grant)
    }

    /// The file's text for `accounts`: one account per line, so a diff shows one line per change.
    public static func render(_ accounts: [ServiceAccount]) -> String {
        var lines: [String] = []
        for account in accounts {
            var members: [String: JSONValue] = [
                "client_email": .string(account.email), "private_key_id": .string(account.keyID),
                "public_key": .string(account.publicKey.pem),
            ]
            switch account.grant {
            case .admin: members["admin"] = .bool(true)
            case .principal(let uid, let claims):
                members["uid"] = .string(uid)
                if !claims.isEmpty { members["claims"] = .object(claims) }
            }
            lines.append("  " + JSONValue.object(members).encoded())
        }
        if lines.isEmpty { return "{\"accounts\": []}\n" }
        return "{\"accounts\": [\n" + lines.joined(separator: ",\n") + "\n]}\n"
    }
}
