public import Crypto
public import PortcullisCore

/// A new service account: its key file in Google's format (what `credentials.Certificate("sa.json")` and
/// `Client.from_service_account_json` read) and the registry entry the operator's accounts file gets.
///
/// The key is RSA 2048 made by OpenSSL; the key file holds the only copy of the private key. Emails are
/// `NAME@PROJECT.iam.portcullis`: shaped like Google's (`NAME@PROJECT.iam.gserviceaccount.com`) so tools that
/// parse them work, on a name no real Google account can have, so an account is plainly one Portcullis issued.
public struct ServiceAccountKeyFile: Sendable {
    public static let emailDomainSuffix = ".iam.portcullis"
    public let account: ServiceAccount
    /// The key file's JSON text (a secret: it carries the private key).
    public let json: String

    /// Why a name or project cannot make an account.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Makes the key and both documents. `tokenURI` is where the libraries post their assertions: the gateway's
    /// `/oauth2/v4/token` under its public URL.
    public static func create(name: String, project: String, tokenURI: String, grant: ServiceAccountGrant)
        throws(Problem) -> ServiceAccountKeyFile
    {
        guard isLabel(name, max: 63) else {
            throw Problem(message: "account name must be 1-63 of a-z, 0-9 and '-', starting with a letter")
        }
        guard isLabel(project, max: 63) else {
            throw Problem(message: "project must be 1-63 of a-z, 0-9 and '-', starting with a letter")
        }
        let privateKey: PrivateKey
        let privatePEM: String
        let publicKey: PublicKey
        do {
            privateKey = try PrivateKey.generateRSA(bits: 2048)
            privatePEM = try privateKey.privateKeyPEM()
            publicKey = try PublicKey(pem: privateKey.publicKeyPEM())
        } catch {
            throw Problem(message: "cannot make an RSA key: \(error)")
        }
        let email = "\(name)@\(project)\(emailDomainSuffix)"
        let keyID = SecureRandom.bytes(20).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        var clientID = "1"
        for byte in SecureRandom.bytes(20) { clientID += String(byte % 10) }
        let document: [(String, String)] = [
            ("type", "service_account"), ("project_id", project), ("private_key_id", keyID),
            ("private_key", privatePEM), ("client_email", email), ("client_id", clientID),
            ("auth_uri", "https://accounts.google.com/o/oauth2/auth"), ("token_uri", tokenURI),
            ("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"),
            ("universe_domain", "googleapis.com"),
        ]
        // Members in Google's order, one per line, as Google's key files are written.
        var out: [UInt8] = Array("{\n".utf8)
        for (index, (key, value)) in document.enumerated() {
            out.append(contentsOf: "  ".utf8)
            JSONValue.encodeString(key, into: &out)
            out.append(contentsOf: ": ".utf8)
            JSONValue.encodeString(value, into: &out)
            out.append(contentsOf: (index + 1 < document.count ? ",\n" : "\n").utf8)
        }
        out.append(contentsOf: "}\n".utf8)
        return ServiceAccountKeyFile(
            account: ServiceAccount(email: email, keyID: keyID, publicKey: publicKey, grant: grant),
            json: String(decoding: out, as: UTF8.self))
    }

    private static func isLabel(_ text: String, max: Int) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...max).contains(bytes.count), let first = bytes.first, (0x61...0x7A).contains(first) else {
            return false
        }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }
}
