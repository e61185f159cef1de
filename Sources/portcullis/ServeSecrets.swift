import Auth
import Gateway
import PortcullisCore

/// The files `serve` reads at start-up: keys and the rules source. Any problem exits with status 2.
struct ServeSecrets {
    var signingKeys: [SigningKeyMaterial]
    var signingKeyIsRandom: Bool
    var adminKey: [UInt8]?
    var jwtHMACSecret: [UInt8]?
    /// `--events-secret`: signs change events.
    var eventsSecret: [UInt8]?

    static func load(_ config: GatewayConfiguration) -> ServeSecrets {
        var secrets = ServeSecrets(signingKeys: [], signingKeyIsRandom: false, adminKey: nil, jwtHMACSecret: nil)
        if let path = config.signingKeyFile {
            let bytes = read(path, option: .signingKey)
            do {
                secrets.signingKeys = try SecretFiles.signingKeys(from: bytes)
            } catch {
                Terminal.fail(
                    ConfigurationError.unreadableFile(
                        option: .signingKey, path: path,
                        reason: error.description
                    ).description)
            }
        } else {
            secrets.signingKeys = [SecretFiles.randomSigningKey()]
            secrets.signingKeyIsRandom = true
        }
        if let path = config.adminKeyFile {
            secrets.adminKey = secret(path, option: .adminKey)
        }
        if let path = config.jwtHMACSecretFile {
            secrets.jwtHMACSecret = secret(path, option: .jwtHMACSecret)
        }
        if let path = config.eventsSecretFile {
            secrets.eventsSecret = secret(path, option: .eventsSecret)
        }
        if let spec = config.jwtKeys, !spec.lowercased().hasPrefix("http://"), !spec.lowercased().hasPrefix("https://")
        {
            // A key file is checked now so a typo fails at start; the key source re-reads it when it changes.
            do {
                let keys = try KeySet.parse(document: read(spec, option: .jwtKeys))
                if keys.keys.isEmpty { Terminal.fail("--jwt-keys \(spec): no usable keys") }
            } catch {
                Terminal.fail("--jwt-keys \(spec): \(error.message)")
            }
        }
        return secrets
    }

    private static func secret(_ path: String, option: ConfigurationOption) -> [UInt8] {
        do {
            return try SecretFiles.secret(from: read(path, option: option), option: option, path: path)
        } catch {
            Terminal.fail(error.description)
        }
    }

    static func read(_ path: String, option: ConfigurationOption) -> [UInt8] {
        switch Terminal.readFile(path, limit: 1 << 20) {
        case .success(let bytes): return bytes
        case .failure(let failure):
            Terminal.fail(
                ConfigurationError.unreadableFile(option: option, path: path, reason: failure.reason).description)
        }
    }
}
