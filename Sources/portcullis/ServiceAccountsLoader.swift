import Auth
import Gateway
import PortcullisCore

/// Reads `--service-accounts` at start-up (an unreadable or invalid file exits 2 with one line) and again on
/// SIGHUP (an invalid new file is logged and the accounts stay as they were), into the registry the token
/// endpoint and the authenticator share.
final class ServiceAccountsLoader: Sendable {
    let registry = ServiceAccountRegistry()
    private let path: String
    private let logger: Logger

    /// nil without `--service-accounts`.
    init?(config: GatewayConfiguration, logger: Logger) {
        guard let path = config.serviceAccountsFile else { return nil }
        self.path = path
        self.logger = logger
        switch Self.load(path) {
        case .success(let accounts): registry.replace(with: accounts)
        case .failure(let problem): Terminal.fail("--service-accounts \(path): \(problem.message)")
        }
    }

    func reload() {
        switch Self.load(path) {
        case .success(let accounts):
            registry.replace(with: accounts)
            logger.info("service accounts reloaded", [("accounts", .int(Int64(accounts.count)))])
        case .failure(let problem):
            logger.error(
                "service accounts reload failed; keeping the previous accounts",
                [("file", .string(path)), ("error", .string(problem.message))])
        }
    }

    private static func load(_ path: String) -> Result<[ServiceAccount], ServiceAccountsFile.Problem> {
        switch Terminal.readFile(path, limit: 16 << 20) {
        case .success(let bytes):
            do {
                return .success(try ServiceAccountsFile.parse(bytes))
            } catch {
                return .failure(error)
            }
        case .failure(let failure): return .failure(ServiceAccountsFile.Problem(message: failure.reason))
        }
    }
}
