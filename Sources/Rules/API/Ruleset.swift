/// A compiled Firebase Storage rules file, ready to authorize requests (docs/rules-language.md).
///
/// Compile once (at start-up or SIGHUP) and share: a `Ruleset` is an immutable value, safe to use from any
/// thread. `evaluate` is the hot path; `explain` additionally says which `match`/`allow` decided.
public struct Ruleset: Sendable {
    let program: Program
    var hooks: RulesetHooks
    /// Decisions of this program that read only method, bucket, path and caller (see `Volatility`); shared by
    /// copies, replaced (so emptied) whenever rules are compiled anew.
    let memo: DecisionMemo

    /// Non-fatal findings of the compiler (e.g. `firestore.get` use, invalid regex literals, overlapping
    /// methods), each at `file:line:col`; the message carries no "warning:" prefix (callers add their own).
    public let warnings: [RulesDiagnostic]

    /// Compiles `source`; `fileName` is used in diagnostics. Throws every problem found, each with a position.
    public static func compile(_ source: String, fileName: String) throws(RulesCompileError) -> Ruleset {
        if source.utf8.count > Limits.maxSourceBytes {
            throw RulesCompileError(diagnostics: [
                RulesDiagnostic(
                    file: fileName, line: 1, column: 1,
                    message: "ruleset source is \(source.utf8.count) bytes; the limit is \(Limits.maxSourceBytes)")
            ])
        }
        var parser = Parser(source: source)
        let file: SyntaxFile
        do {
            file = try parser.parseFile()
        } catch {
            throw RulesCompileError(diagnostics: [
                RulesDiagnostic(
                    file: fileName, line: error.pos.line, column: error.pos.column, message: error.message)
            ])
        }
        var compiler = Compiler(file: file, fileName: fileName)
        let program = compiler.compile()
        if !compiler.errors.isEmpty {
            let sorted = compiler.errors.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
            throw RulesCompileError(diagnostics: sorted)
        }
        return Ruleset(
            program: program, hooks: RulesetHooks(), memo: DecisionMemo(capacity: Limits.memoisedDecisions),
            warnings: compiler.warnings)
    }

    /// A ruleset that denies everything (what the gateway uses when no rules file is configured).
    public static let denyAll = Ruleset(
        program: Program(version: 2, fileName: "<deny-all>", blocks: [], functions: [], captureSlots: 0),
        hooks: RulesetHooks(), memo: DecisionMemo(capacity: 0), warnings: [])

    /// The declared `rules_version` (1 when absent).
    public var version: Int { program.version }

    /// Decides a request. Errors inside conditions deny (only) the statement they occur in.
    ///
    /// A decision that evaluated no volatile condition (none reading `request.time`, `resource`,
    /// `request.resource` or calling `debug()`) depends only on method, bucket, path and caller, and is memoised
    /// on them for callers with a credential digest (and anonymous ones); the next such request is answered
    /// from the memo without evaluating anything.
    public func evaluate(_ request: RulesRequest) -> RulesDecision {
        let key = DecisionKey(request)
        if let key, let allowed = memo.lookup(key) { return RulesDecision(allowed: allowed) }
        return withUnsafePointer(to: request) { pointer in
            var evaluator = Evaluator(program: program, request: pointer, hooks: hooks, explain: false)
            let decision = evaluator.decide()
            if let key, !evaluator.readVolatile, decision.determined { memo.insert(key, allowed: decision.allowed) }
            return decision
        }
    }

    /// Decides a request and explains the decision: the granting `allow` (with its match and position), or
    /// why nothing granted (no complete match, no statement for the method, each condition's outcome).
    public func explain(_ request: RulesRequest) -> RulesDecision {
        withUnsafePointer(to: request) { pointer in
            var evaluator = Evaluator(program: program, request: pointer, hooks: hooks, explain: true)
            return evaluator.decide()
        }
    }

    /// A copy that sends `debug()` output (the argument rendered, e.g. `'x'`, `[1, 2]`) to `handler`.
    public func with(debugHandler handler: @escaping @Sendable (String) -> Void) -> Ruleset {
        var copy = self
        copy.hooks.debugHandler = handler
        return copy
    }

    /// A copy that sends one-time run-time warnings to `handler`: `firestore.*` calls,
    /// list requests under rules_version 1.
    public func with(warningHandler handler: @escaping @Sendable (String) -> Void) -> Ruleset {
        var copy = self
        copy.hooks.warningHandler = handler
        return copy
    }
}
