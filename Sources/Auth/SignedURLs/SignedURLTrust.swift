public import PortcullisCore

/// Whose signed URLs the gateway honours (`--signed-url-accounts`), and as whom each request then acts.
///
/// - A registered account named by email: its current key and grant from the registry (removing or re-keying it
///   in the accounts file revokes its URLs at the next reload).
/// - A key given by the operator (a Google key file, a PEM for an email, or Google's x509 certificate map URL
///   for an email): when the email is a registered
///   account, the registry decides as above (the file's key is not used, so revocation still works); a
///   Portcullis-issued email (`…iam.portcullis`) that is no longer registered is refused; any other signer (a
///   Google service account) acts as admin — the operator listed it for exactly this.
/// - An HMAC key by access id (`GOOG4-HMAC-SHA256`): acts as admin.
public struct SignedURLTrust: Sendable {
    /// A signer the operator gave a key for.
    public struct Signer: Sendable {
        public let id: String
        public let key: SignedURLKey

        public init(id: String, key: SignedURLKey) {
            self.id = id
            self.key = key
        }
    }

    private let registry: ServiceAccountRegistry?
    private let registeredEmails: Set<ExactString>
    private let signers: [ExactString: Signer]

    public init(registry: ServiceAccountRegistry?, registeredEmails: [String], signers: [Signer]) {
        self.registry = registry
        self.registeredEmails = Set(registeredEmails.map { ExactString($0) })
        var byID: [ExactString: Signer] = [:]
        for signer in signers { byID[ExactString(signer.id)] = signer }
        self.signers = byID
    }

    /// The key that verifies `id`'s signatures and the grant its requests get; nil when `id` is not trusted.
    public func resolve(_ id: String) -> (key: SignedURLKey, grant: ServiceAccountGrant)? {
        let exact = ExactString(id)
        if let signer = signers[exact] {
            if case .hmac = signer.key { return (signer.key, .admin) }
            if let account = registry?.account(email: id) { return (.rsa(account.publicKey), account.grant) }
            if id.utf8.reversed().starts(with: ServiceAccountKeyFile.emailDomainSuffix.utf8.reversed()) {
                return nil
            }
            return (signer.key, .admin)
        }
        guard registeredEmails.contains(exact), let account = registry?.account(email: id) else { return nil }
        return (.rsa(account.publicKey), account.grant)
    }
}
