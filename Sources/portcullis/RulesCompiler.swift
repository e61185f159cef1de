import Gateway

/// Adapts the Rules module's compiler to `RulesStore.Compiler`.
enum RulesCompiler {
    static let compile: RulesStore.Compiler = { _, fileName in
        .failure(RulesLoadFailure(messages: ["\(fileName):1:1: the rules engine is not available in this build"]))
    }
}
