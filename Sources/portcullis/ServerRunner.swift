import Gateway
import PortcullisCore
#if canImport(Glibc)
import Glibc
#endif

/// Builds the running server from a validated configuration. (Filled in as the HTTP, auth, rules, storage and
/// v0 pieces land.)
enum ServerRunner {
    static func run(config: GatewayConfiguration, secrets: ServeSecrets, logger: Logger) async -> Never {
        Terminal.fail("the HTTP server is not built yet", code: 1)
    }
}
