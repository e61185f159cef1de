public import Rules
public import PortcullisCore

/// A compiled rules file judges the v0 API's access requests (rules.md §2.1 method mapping is done by the
/// handlers; this is a field-for-field conversion).
extension Ruleset: CompiledRules {
    public func decide(_ request: AccessRequest) -> AccessDecision {
        let decision = evaluate(RulesRequest(request))
        return AccessDecision(allowed: decision.allowed, explanation: decision.explanation)
    }
}

extension RulesRequest {
    /// The rules view of an access request.
    public init(_ request: AccessRequest) {
        self.init(method: RulesMethod(request.method), bucket: request.bucket, path: request.path,
                  auth: request.principal, time: request.time, resource: request.resource,
                  requestResource: request.requestResource, delimiter: request.delimiter)
    }
}

extension RulesMethod {
    public init(_ method: AccessMethod) {
        switch method {
        case .get: self = .get
        case .list: self = .list
        case .create: self = .create
        case .update: self = .update
        case .delete: self = .delete
        }
    }
}

extension RulesStore {
    /// A store compiling with the Rules module: `file:line:col: message` diagnostics on failure; compiler
    /// warnings and `debug()` output go to `logger`.
    public convenience init(logger: Logger) {
        self.init(compile: { source, fileName in
            do throws(RulesCompileError) {
                let ruleset = try Ruleset.compile(source, fileName: fileName)
                for warning in ruleset.warnings {
                    logger.warning("rules warning", [("warning", .string(warning.description))])
                }
                return .success(ruleset
                    .with(debugHandler: { logger.debug("rules debug()", [("value", .string($0))]) })
                    .with(warningHandler: { logger.warning("rules", [("warning", .string($0))]) }))
            } catch {
                return .failure(RulesLoadFailure(messages: error.diagnostics.map(\.description)))
            }
        }, logger: logger)
    }
}
