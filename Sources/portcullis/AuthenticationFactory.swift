import Auth
import Gateway
import PortcullisCore
import Synchronization
import Upstream

/// The request authenticator for `serve`: the Auth module's `Authenticator` (admin key, then JWTs) configured
/// from `--jwt-*`, `--firebase-project`, `--admin-key`. The first key load runs in the background while the
/// server starts; `keysAttempted` turns true once it finished (either way), and readiness waits for it so a
/// load balancer never sends a bearer token to an instance that would refuse it for want of keys.
enum AuthenticationFactory {
    static func make(
        config: GatewayConfiguration, secrets: ServeSecrets, client: UpstreamClient,
        registry: MetricsRegistry, logger: Logger,
        keysAttempted: StartupGate, traces: any TraceRoots
    ) -> GatewayAuthentication {
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
        configuration.trustsEmulatorOwner = config.devTrustEmulatorOwner
        if config.devTrustEmulatorOwner {
            logger.warning(
                "--dev-trust-emulator-owner is on: `Authorization: Bearer owner` acts as admin and bypasses the rules; never use this outside local development"
            )
        }

        var keySource: KeySource?
        if let keySpec {
            keySource = KeySource.from(
                spec: keySpec, fetcher: KeyFetcher.make(client: client, traces: traces), logger: logger)
        }
        if keySource == nil && configuration.hmacSecret == nil {
            logger.warning(
                "no --jwt-keys, --firebase-project or --jwt-hmac-secret: bearer tokens are refused (anonymous requests and the admin key still work)"
            )
        }
        let authenticator = Authenticator(
            configuration: configuration, keySource: keySource, metrics: registry,
            logger: logger)
        Task {
            await authenticator.start()
            if let keySource, keySource.current == nil {
                logger.warning("the first JWT key load failed; bearer tokens are refused until a refresh succeeds")
            }
            keysAttempted.open()
        }
        return GatewayAuthentication(authenticator)
    }
}

/// A one-way latch for start-up work that readiness waits on.
final class StartupGate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once `open()` was called (at once if it already was).
    func wait() async {
        await withCheckedContinuation { continuation in
            let openNow = state.withLock { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if openNow { continuation.resume() }
        }
    }
}
