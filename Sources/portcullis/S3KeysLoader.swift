import Gateway
import PortcullisCore

/// Reads `--s3-keys` at start-up (an unreadable or invalid file exits 2 with one line) and again on SIGHUP (an
/// invalid new file is logged and the keys stay as they were), into the store the S3 surface reads. Secrets are
/// never logged: only how many keys were loaded.
final class S3KeysLoader: Sendable {
    let store = S3AccessKeyStore()
    private let path: String?
    private let logger: Logger

    init(config: GatewayConfiguration, logger: Logger) {
        self.path = config.s3KeysFile
        self.logger = logger
        guard let path else { return }
        switch Self.load(path) {
        case .success(let keys): store.replace(with: keys)
        case .failure(let problem): Terminal.fail("--s3-keys \(path): \(problem.message)")
        }
    }

    func reload() {
        guard let path else { return }
        switch Self.load(path) {
        case .success(let keys):
            store.replace(with: keys)
            logger.info("s3 keys reloaded", [("keys", .int(Int64(keys.count)))])
        case .failure(let problem):
            logger.error(
                "s3 keys reload failed; keeping the previous keys",
                [("file", .string(path)), ("error", .string(problem.message))])
        }
    }

    private static func load(_ path: String) -> Result<[S3AccessKey], S3AccessKeysFile.Problem> {
        switch Terminal.readFile(path, limit: 1 << 20) {
        case .success(let bytes):
            do { return .success(try S3AccessKeysFile.parse(bytes)) } catch { return .failure(error) }
        case .failure(let failure): return .failure(S3AccessKeysFile.Problem(message: failure.reason))
        }
    }
}
