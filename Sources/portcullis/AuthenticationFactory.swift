import Auth
import Gateway
import PortcullisCore
import Upstream

/// The request authenticator for `serve`: the Auth module's `Authenticator` (admin key, then JWTs) configured
/// from `--jwt-*`, `--firebase-project`, `--admin-key`. Key loading starts in the background; until keys are
/// loaded, tokens fail with a 401 (anonymous requests and the admin key work at once).
enum AuthenticationFactory {
    static func make(config: GatewayConfiguration, secrets: ServeSecrets, client: UpstreamClient,
                     registry: MetricsRegistry, logger: Logger) -> GatewayAuthentication {
        var configuration: AuthConfiguration
        var keySpec = config.jwtKeys
        if let project = config.firebaseProject {
            let firebase = AuthConfiguration.firebase(projectID: project)
            configuration = firebase.0
            keySpec = firebase.keysURL
        } else {
            configuration = AuthConfiguration(issuer: config.jwtIssuer, audience: config.jwtAudience)
        }
        configuration.leewaySeconds = config.jwtLeewaySeconds
        configuration.hmacSecret = secrets.jwtHMACSecret
        configuration.adminKey = secrets.adminKey

        var keySource: KeySource?
        if let keySpec {
            keySource = KeySource.from(spec: keySpec, fetcher: KeyFetcher.make(client: client), logger: logger)
        }
        if keySource == nil && configuration.hmacSecret == nil {
            logger.warning("no --jwt-keys, --firebase-project or --jwt-hmac-secret: bearer tokens are refused (anonymous requests and the admin key still work)")
        }
        let authenticator = Authenticator(configuration: configuration, keySource: keySource, metrics: registry,
                                          logger: logger)
        Task { await authenticator.start() }
        return GatewayAuthentication(authenticator)
    }
}
