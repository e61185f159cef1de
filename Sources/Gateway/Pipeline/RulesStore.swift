public import PortcullisCore
import Synchronization

/// A compiled rules file as the gateway uses it: one access decision per request. `Ruleset` conforms (see
/// `Ruleset+CompiledRules.swift`); tests may use fakes.
public protocol CompiledRules: Sendable {
    func decide(_ request: AccessRequest) -> AccessDecision
}

/// Why a rules source could not become `CompiledRules`: one `file:line:col: message` line per problem.
public struct RulesLoadFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let messages: [String]
    public init(messages: [String]) { self.messages = messages }
    public var description: String { messages.joined(separator: "\n") }
}

/// Holds the active rules behind a lock, so SIGHUP can swap them while requests are being judged.
///
/// Contract: `reload` compiles first and swaps only on success — an invalid new file is reported and the old
/// rules stay active. With no rules at all (no `--rules`) every request is denied.
public final class RulesStore: Sendable {
    public typealias Compiler = @Sendable (_ source: String, _ fileName: String) -> Result<any CompiledRules, RulesLoadFailure>

    private let active = Mutex<(any CompiledRules)?>(nil)
    private let compile: Compiler
    private let logger: Logger

    public init(compile: @escaping Compiler, logger: Logger = .disabled) {
        self.compile = compile
        self.logger = logger
    }

    /// The rules in force, nil when none were ever loaded.
    public var current: (any CompiledRules)? { active.withLock { $0 } }

    /// Compiles `source` and makes it active; on failure logs each error and keeps what was active.
    @discardableResult
    public func load(source: String, fileName: String) -> Result<Void, RulesLoadFailure> {
        switch compile(source, fileName) {
        case .success(let rules):
            active.withLock { $0 = rules }
            logger.info("rules loaded", [("file", .string(fileName))])
            return .success(())
        case .failure(let failure):
            let kept = active.withLock { $0 } != nil
            for message in failure.messages {
                logger.error("rules failed to compile", [("error", .string(message)), ("file", .string(fileName))])
            }
            logger.error(kept ? "keeping the previous rules" : "no rules active: every request is denied",
                         [("file", .string(fileName))])
            return .failure(failure)
        }
    }
}

/// The `Authorizer` the v0 API asks: the store's current rules, or deny-all when none are loaded.
///
/// With a registry it counts `portcullis_rules_decisions_total{method,decision}` with pre-resolved counters.
/// `V0API` already counts that family at its call site, so the server passes no registry (no double count).
public struct RulesAuthorizer: Authorizer {
    private let store: RulesStore
    private let allowed: [AccessMethod: Counter]
    private let denied: [AccessMethod: Counter]
    private static let denyAll = DenyAllAuthorizer()

    public init(store: RulesStore, registry: MetricsRegistry? = nil) {
        self.store = store
        guard let registry else {
            allowed = [:]
            denied = [:]
            return
        }
        let family = registry.counter("portcullis_rules_decisions_total", help: "Rules decisions by method and outcome.",
                                      labels: ["method", "decision"])
        var allowed: [AccessMethod: Counter] = [:]
        var denied: [AccessMethod: Counter] = [:]
        for method in AccessMethod.allCases {
            allowed[method] = family.labels(method.rawValue, "allow")
            denied[method] = family.labels(method.rawValue, "deny")
        }
        self.allowed = allowed
        self.denied = denied
    }

    public func authorize(_ request: AccessRequest) -> AccessDecision {
        let decision = store.current?.decide(request) ?? Self.denyAll.authorize(request)
        (decision.allowed ? allowed : denied)[request.method]?.increment()
        return decision
    }
}
