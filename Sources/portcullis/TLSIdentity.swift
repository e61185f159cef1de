import Crypto
import Gateway
import PortcullisCore

/// Reads `--tls-cert`/`--tls-key` into the listeners' TLS context: at start a pair that does not load ends the
/// start with a one-line message; on SIGHUP it is read again and swapped in for new connections, and a pair that
/// does not load then is logged while the current one keeps serving.
enum TLSIdentity {
    /// The context for both listeners, or nil when TLS is not configured.
    static func load(config: GatewayConfiguration) -> TLSServerContext? {
        guard let certPath = config.tlsCertFile, let keyPath = config.tlsKeyFile else { return nil }
        let (cert, key) = (ServeSecrets.read(certPath, option: .tlsCert), ServeSecrets.read(keyPath, option: .tlsKey))
        do {
            return try TLSServerContext(certificatePEM: cert, privateKeyPEM: key)
        } catch {
            Terminal.fail("--tls-cert \(certPath) / --tls-key \(keyPath): \(error.description)")
        }
    }

    /// Re-reads both files and replaces the context's pair; logs the outcome.
    static func reload(_ context: TLSServerContext, config: GatewayConfiguration, logger: Logger) {
        guard let certPath = config.tlsCertFile, let keyPath = config.tlsKeyFile else { return }
        let files = [("cert", certPath), ("key", keyPath)].map { ($0.0, $0.1, Terminal.readFile($0.1, limit: 1 << 20)) }
        var contents: [[UInt8]] = []
        for (name, path, result) in files {
            switch result {
            case .success(let bytes): contents.append(bytes)
            case .failure(let failure):
                logger.error(
                    "SIGHUP: TLS \(name) file unreadable, keeping the current certificate",
                    [("path", .string(path)), ("reason", .string(failure.reason))])
                return
            }
        }
        do {
            try context.replace(certificatePEM: contents[0], privateKeyPEM: contents[1])
            logger.info("SIGHUP: TLS certificate reloaded", [("cert", .string(certPath))])
        } catch {
            logger.error(
                "SIGHUP: TLS certificate or key does not load, keeping the current one",
                [("cert", .string(certPath)), ("reason", .string(error.description))])
        }
    }
}
