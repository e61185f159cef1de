import Auth
import Crypto
import Gateway
import PortcullisCore
import Upstream

/// Reads the keys `--signed-url-accounts` names (key files, PEM files, HMAC secrets) at start-up into the
/// `SignedURLTrust` the XML-style surface checks signatures with. A file that cannot be read or holds no usable
/// key exits with status 2.
enum SignedURLSigners {
    /// Certificate-map URLs start loading in the background (their signers are refused until the first load).
    static func load(
        _ config: GatewayConfiguration, registry: ServiceAccountRegistry?, client: UpstreamClient, logger: Logger,
        traces: any TraceRoots
    ) -> SignedURLTrust? {
        guard !config.signedURLAccounts.isEmpty else { return nil }
        var emails: [String] = []
        var signers: [SignedURLTrust.Signer] = []
        for spec in config.signedURLAccounts {
            switch spec {
            case .registered(let email):
                emails.append(email)
            case .keyFile(let path):
                let document = try? JSONValue.parse(ServeSecrets.read(path, option: .signedURLAccounts))
                guard let email = document?["client_email"]?.stringValue,
                    let pem = document?["private_key"]?.stringValue
                else { Terminal.fail("--signed-url-accounts \(path): not a service-account key file") }
                do {
                    let publicKey = try PublicKey(pem: PrivateKey(pem: pem).publicKeyPEM())
                    signers.append(SignedURLTrust.Signer(id: email, key: .rsa(publicKey)))
                } catch {
                    Terminal.fail("--signed-url-accounts \(path): \(error)")
                }
            case .publicKey(let email, let path)
            where path.lowercased().hasPrefix("https://") || path.lowercased().hasPrefix("http://"):
                let source = KeySource.from(
                    spec: path, fetcher: KeyFetcher.make(client: client, traces: traces), logger: logger)
                Task { await source.start() }
                signers.append(SignedURLTrust.Signer(id: email, key: .keySource(source)))
            case .publicKey(let email, let path):
                let text = String(decoding: ServeSecrets.read(path, option: .signedURLAccounts), as: UTF8.self)
                do {
                    signers.append(SignedURLTrust.Signer(id: email, key: .rsa(try PublicKey(pem: text))))
                } catch {
                    Terminal.fail("--signed-url-accounts \(spec): \(error)")
                }
            case .hmac(let accessID, let path):
                do {
                    let secret = try SecretFiles.secret(
                        from: ServeSecrets.read(path, option: .signedURLAccounts), option: .signedURLAccounts,
                        path: path)
                    signers.append(SignedURLTrust.Signer(id: accessID, key: .hmac(secret)))
                } catch {
                    Terminal.fail(error.description)
                }
            }
        }
        return SignedURLTrust(registry: registry, registeredEmails: emails, signers: signers)
    }
}
