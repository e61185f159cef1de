public import PortcullisCore
public import Rules
import Synchronization

/// A compiled rules file as the service uses it. `Ruleset` is the production engine; tests may pass fakes.
/// The request and decision types are the ones the Rules module defines — there is no mirror of them.
public protocol RulesEngine: Sendable {
    /// The decision alone (the hot path).
    func evaluate(_ request: RulesRequest) -> RulesDecision
    /// The decision with the match and condition that decided it (rules playground, debugging).
    func explain(_ request: RulesRequest) -> RulesDecision
}

extension Ruleset: RulesEngine {}

/// Why a rules source could not become a `RulesEngine`: one `file:line:col: message` line per problem.
public struct RulesLoadFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let messages: [String]
    public init(messages: [String]) { self.messages = messages }
    public var description: String { messages.joined(separator: "\n") }
}

/// Holds the active rules behind a lock, so SIGHUP can swap them while requests are being judged.
///
/// Contract: `load` compiles first and swaps only on success — an invalid new file is reported and the old
/// rules stay active. With no rules at all (no `--rules`) every request is denied.
public final class RulesStore: Sendable {
    public typealias Compiler =
        @Sendable (_ source: String, _ fileName: String)
        -> Result<any RulesEngine, RulesLoadFailure>

    private let active: Mutex<(any RulesEngine)?>
    private let compile: Compiler
    private let logger: Logger

    public init(compile: @escaping Compiler, logger: Logger = .disabled) {
        self.active = Mutex(nil)
        self.compile = compile
        self.logger = logger
    }

    /// A store holding `engine` for good (tests, and callers that never reload).
    public init(fixed engine: any RulesEngine) {
        self.active = Mutex(engine)
        self.compile = { _, _ in .failure(RulesLoadFailure(messages: ["this store holds fixed rules"])) }
        self.logger = .disabled
    }

    /// The rules in force, nil when none were ever loaded.
    public var current: (any RulesEngine)? { active.withLock { $0 } }

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
            logger.error(
                kept ? "keeping the previous rules" : "no rules active: every request is denied",
                [("file", .string(fileName))])
            return .failure(failure)
        }
    }
}

extension RulesStore {
    /// A store compiling with the Rules module: `file:line:col: message` diagnostics on failure; compiler
    /// warnings and `debug()` output go to `logger`.
    public convenience init(logger: Logger) {
        self.init(
            compile: { source, fileName in
                do throws(RulesCompileError) {
                    let ruleset = try Ruleset.compile(source, fileName: fileName)
                    for warning in ruleset.warnings {
                        logger.warning("rules warning", [("warning", .string(warning.description))])
                    }
                    return .success(
                        ruleset
                            .with(debugHandler: { logger.debug("rules debug()", [("value", .string($0))]) })
                            .with(warningHandler: { logger.warning("rules", [("warning", .string($0))]) }))
                } catch {
                    return .failure(RulesLoadFailure(messages: error.diagnostics.map(\.description)))
                }
            }, logger: logger)
    }
}

/// Grants everything. For tests of operations that are not about access control — never the server default
/// (with no rules file the server denies everything).
public struct AllowAllRules: RulesEngine {
    public init() {}
    public func evaluate(_ request: RulesRequest) -> RulesDecision { RulesDecision(allowed: true) }
    public func explain(_ request: RulesRequest) -> RulesDecision {
        RulesDecision(allowed: true, explanation: "allow-all (test rules)")
    }
}
