import Crypto
import PortcullisCore
import Testing

@testable import Auth

/// Who `--signed-url-accounts` trusts and as whom: registered accounts through the registry (so removing or
/// re-keying them revokes their URLs even when their key file is listed), foreign key files and HMAC keys as
/// admin, anyone else not at all.
@Suite struct SignedURLTrustTests {
    static let tokenURI = "https://gw.example/oauth2/v4/token"

    @Test func resolvesByRegistryThenByGivenKeys() throws {
        let worker = try ServiceAccountKeyFile.create(
            name: "worker", project: "demo", tokenURI: Self.tokenURI, grant: .principal(uid: "w", claims: [:]))
        let listedByFile = try ServiceAccountKeyFile.create(
            name: "ci", project: "demo", tokenURI: Self.tokenURI, grant: .admin)
        let registry = ServiceAccountRegistry([worker.account, listedByFile.account])
        let foreign = try PublicKey(pem: PrivateKey.generateRSA().publicKeyPEM())
        let trust = SignedURLTrust(
            registry: registry, registeredEmails: [worker.account.email],
            signers: [
                .init(
                    id: listedByFile.account.email,
                    key: .rsa(try PublicKey(pem: PrivateKey.generateRSA().publicKeyPEM()))),
                .init(id: "outsider@demo.iam.gserviceaccount.com", key: .rsa(foreign)),
                .init(id: "GOOG1KEY", key: .hmac(Array("secret".utf8))),
            ])

        let resolvedWorker = try #require(trust.resolve(worker.account.email))
        #expect(resolvedWorker.grant == .principal(uid: "w", claims: [:]))
        guard case .rsa(let key) = resolvedWorker.key else { Issue.record("not RSA"); return }
        #expect(key.pem == worker.account.publicKey.pem)

        // A registered account listed by key file: the registry's key, not the file's.
        let resolvedCI = try #require(trust.resolve(listedByFile.account.email))
        guard case .rsa(let ciKey) = resolvedCI.key else { Issue.record("not RSA"); return }
        #expect(ciKey.pem == listedByFile.account.publicKey.pem && resolvedCI.grant == .admin)

        #expect(trust.resolve("outsider@demo.iam.gserviceaccount.com")?.grant == .admin)
        #expect(trust.resolve("GOOG1KEY")?.grant == .admin)
        #expect(trust.resolve("nobody@demo.iam.portcullis") == nil)

        // Removed from the accounts file: refused, whether listed by email or by key file.
        registry.replace(with: [])
        #expect(trust.resolve(worker.account.email) == nil)
        #expect(trust.resolve(listedByFile.account.email) == nil)
        #expect(trust.resolve("outsider@demo.iam.gserviceaccount.com") != nil)
    }
}
