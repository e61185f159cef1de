/// `--signed-url-accounts`: whose Google-style (V2/V4) signed URLs the XML-style path honours. Kept in its own
/// file so the option lists other features extend stay small to merge.
extension ConfigurationOption {
    public static let signedURLAccounts = ConfigurationOption(
        flag: "signed-url-accounts", valueName: "SRC", environment: "PORTCULLIS_SIGNED_URL_ACCOUNTS",
        defaultText: nil,
        summary:
            "Signers whose V2/V4 signed URLs are honoured on `/{bucket}/{object}`: `EMAIL` of an account registered with `--service-accounts` (its grant), a Google key file `FILE.json`, `EMAIL=FILE.pem` (a public key or certificate), `EMAIL=https://…` (Google's x509 certificate map for it), or `hmac:ACCESS_ID=FILE` (GOOG4-HMAC-SHA256 secret). Repeatable; env is comma-separated. None: signed URLs are refused.",
        repeatable: true)
}

/// One `--signed-url-accounts` entry, by its form.
public enum SignedURLAccountSpec: Sendable, Equatable, CustomStringConvertible {
    /// `EMAIL`: an account of `--service-accounts`.
    case registered(email: String)
    /// `FILE.json`: a service-account key file (its `client_email` and the public half of `private_key`).
    case keyFile(path: String)
    /// `EMAIL=FILE`: a PEM public key or X.509 certificate for that signer; `EMAIL=https://…`: a certificate map
    /// (Google's `…/metadata/x509/EMAIL`), fetched and refreshed like `--jwt-keys` URLs.
    case publicKey(email: String, path: String)
    /// `hmac:ACCESS_ID=FILE`: an HMAC key's secret (the file's text, surrounding whitespace trimmed).
    case hmac(accessID: String, path: String)

    public var description: String {
        switch self {
        case .registered(let email): email
        case .keyFile(let path): path
        case .publicKey(let email, let path): "\(email)=\(path)"
        case .hmac(let accessID, let path): "hmac:\(accessID)=\(path)"
        }
    }

    /// The entry's form: `hmac:` prefix, then `=`, then a `.json` path, else an email (it must contain `@`).
    public static func parse(_ text: String) -> SignedURLAccountSpec? {
        guard !text.isEmpty else { return nil }
        if text.utf8.starts(with: "hmac:".utf8) {
            let rest = text.dropFirst(5)
            guard let equals = rest.firstIndex(of: "="), equals != rest.startIndex,
                rest.index(after: equals) != rest.endIndex
            else { return nil }
            return .hmac(accessID: String(rest[..<equals]), path: String(rest[rest.index(after: equals)...]))
        }
        if let equals = text.firstIndex(of: "=") {
            let email = String(text[..<equals])
            let path = String(text[text.index(after: equals)...])
            guard email.contains("@"), !path.isEmpty else { return nil }
            return .publicKey(email: email, path: path)
        }
        if text.lowercased().hasSuffix(".json") { return .keyFile(path: text) }
        guard text.contains("@") else { return nil }
        return .registered(email: text)
    }
}
