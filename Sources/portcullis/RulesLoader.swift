import Gateway
import PortcullisCore

/// Reads `--rules` at start-up (a missing or invalid file exits 2) and again on SIGHUP (an invalid new file is
/// logged with file:line:col and the old rules stay). Without `--rules` everything is denied, with a warning.
final class RulesLoader: Sendable {
    let store: RulesStore
    private let path: String?
    private let logger: Logger

    init(config: GatewayConfiguration, logger: Logger) {
        path = config.rulesFile
        self.logger = logger
        store = RulesStore(logger: logger)
    }

    func loadAtStart() {
        guard let path else {
            logger.warning("no --rules file: every request is denied (admin key and download tokens still work)")
            return
        }
        let source: String
        switch Terminal.readFile(path) {
        case .success(let bytes): source = String(decoding: bytes, as: UTF8.self)
        case .failure(let failure): Terminal.fail("--rules \(path): \(failure.reason)")
        }
        if case .failure(let failure) = store.load(source: source, fileName: path) {
            Terminal.fail("--rules \(path) does not compile: \(failure.messages.first ?? "unknown error")")
        }
    }

    func reload() {
        guard let path else {
            logger.warning("SIGHUP ignored: no --rules file configured")
            return
        }
        switch Terminal.readFile(path) {
        case .success(let bytes): store.load(source: String(decoding: bytes, as: UTF8.self), fileName: path)
        case .failure(let failure):
            logger.error("rules reload failed; keeping the previous rules", [("file", .string(path)),
                                                                             ("error", .string(failure.reason))])
        }
    }
}
