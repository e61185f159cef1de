import PortcullisCore
import Testing

@testable import Rules

/// Literal-only expressions are computed once at compile time, and still cost what they stood for.
@Suite struct ConstantFoldingTests {
    static func condition(_ ruleset: Ruleset) -> Expr? { ruleset.program.blocks.first?.allows.first?.condition }

    @Test(arguments: [
        "[1, 2, 3]", "100 * 1024 * 1024", "timestamp.date(2030, 1, 1)", "{'a': [1, 'x']}", "!(1 < 2)",
        "true ? 'a' : 'b'", "-(3)",
    ])
    func literalOnlyExpressionsAreFolded(_ text: String) throws {
        let rules = try Ruleset.compile(TS.wrap("(\(text)) != request.method"), fileName: "f.rules")
        guard case .binary(_, let folded, _)? = Self.condition(rules) else {
            Issue.record("unexpected shape")
            return
        }
        guard case .folded = folded else {
            Issue.record("\(text) was not folded: \(folded)")
            return
        }
    }

    @Test(arguments: ["1 / 0", "debug(1)", "request.auth.uid", "[request.path]", "9223372036854775807 + 1"])
    func errorsEffectsAndRequestReadsAreNotFolded(_ text: String) throws {
        let rules = try Ruleset.compile(TS.wrap("(\(text)) != request.method"), fileName: "f.rules")
        guard case .binary(_, let operand, _)? = Self.condition(rules) else {
            Issue.record("unexpected shape")
            return
        }
        if case .folded = operand { Issue.record("\(text) was folded") }
    }

    @Test func foldedValuesEqualEvaluatedOnes() {
        #expect(TS.eval("100 * 1024 * 1024") == "104857600")
        #expect(TS.eval("timestamp.date(2030, 1, 1) > request.time") == "true")
        #expect(TS.eval("[1, [2, 'x'], {'k': 1.5}]") == "[1, [2, 'x'], {'k': 1.5}]")
        #expect(TS.eval("'a' in {'a': 1}") == "true")
    }

    /// `[0, …, 0].size() > 0` costs N + 4 expression evaluations (the comparison, the call, the list, N items,
    /// the right-hand 0); the budget allows 1000. The folded list is charged N + 1, so the boundary stays where
    /// the unfolded evaluation put it.
    @Test func foldedExpressionsAreChargedTheirFullCost() throws {
        func decide(items: Int) throws -> Bool {
            let list = "[" + Array(repeating: "0", count: items).joined(separator: ",") + "]"
            let rules = try Ruleset.compile(TS.wrap("\(list).size() > 0"), fileName: "f.rules")
            return rules.evaluate(TS.request(.get, "p")).allowed
        }
        #expect(try decide(items: Limits.maxExpressionsPerRequest - 4))
        #expect(try !decide(items: Limits.maxExpressionsPerRequest - 3))
    }
}
