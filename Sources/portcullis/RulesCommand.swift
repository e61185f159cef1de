/// `portcullis rules check FILE` and `portcullis rules test FILE CASES.json [--explain]`.
enum RulesCommand {
    static func run(_ arguments: [String]) -> Never {
        Terminal.fail("rules tooling is not built yet", code: 1)
    }
}
