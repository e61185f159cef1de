import Gateway
import PortcullisCore
import Rules
import Service

/// Reads `--rules` at start-up (a missing or invalid file exits 2 with one line) and again on SIGHUP (an invalid
/// new file is logged with file:line:col and the old rules stay). Without `--rules` everything is denied, with a
/// warning.
final class RulesLoader: Sendable {
    let store: RulesStore
    private let path: String?
    private let logger: Logger

    init(config: GatewayConfiguration, logger: Logger) {
        path = config.rulesFile
        self.logger = logger
        store = RulesStore(logger: logger)
    }

    /// Reads and compiles the start-up rules before anything is logged, so a bad file is one line and exit 2.
    static func preflight(_ config: GatewayConfiguration) -> String? {
        guard let path = config.rulesFile else { return nil }
        let source: String
        switch Terminal.readFile(path) {
        case .success(let bytes): source = String(decoding: bytes, as: UTF8.self)
        case .failure(let failure): Terminal.fail("--rules \(path): \(failure.reason)")
        }
        do {
            _ = try Ruleset.compile(source, fileName: path)
        } catch {
            let more =
                error.diagnostics.count > 1
                ? " (and \(error.diagnostics.count - 1) more; see `portcullis rules check`)" : ""
            Terminal.fail("--rules does not compile: \(error.diagnostics.first?.description ?? "unknown error")\(more)")
        }
        return source
    }

    /// Activates the preflighted source, or warns that everything is denied.
    func loadAtStart(source: String?) {
        guard let path, let source else {
            logger.warning("no --rules file: every request is denied (admin key and download tokens still work)")
            return
        }
        if case .failure(let failure) = store.load(source: source, fileName: path) {
            Terminal.fail("--rules does not compile: \(failure.messages.first ?? "unknown error")")
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
            logger.error(
                "rules reload failed; keeping the previous rules",
                [
                    ("file", .string(path)),
                    ("error", .string(failure.reason)),
                ])
        }
    }
}
