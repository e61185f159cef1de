import Foundation
import Testing

@testable import Rules

/// The rules conformance set (Tests/RulesTests/Fixtures/conformance/README.md): every public case, run from the fixture files exactly as `portcullis rules test` runs them.
@Suite struct ConformanceTests {
    static var conformanceDirectory: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent("conformance")
    }

    static var rulesetNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: conformanceDirectory.path)) ?? [])
            .filter { !$0.hasSuffix(".md") }.sorted()
    }

    /// The public conformance rulesets, plus `RS-C-identity` (RS-C against canonically equivalent uids; ours).
    static let publicRulesets = [
        "RS-A", "RS-B", "RS-C", "RS-D", "RS-E", "RS-F", "RS-G", "RS-H", "RS-I", "RS-J1", "RS-J2", "RS-K",
    ]

    @Test func allRulesetsArePresent() {
        #expect(Self.rulesetNames == (Self.publicRulesets + ["RS-C-identity"]).sorted())
    }

    @Test(arguments: rulesetNames)
    func rulesetPassesItsCases(_ name: String) throws {
        let dir = Self.conformanceDirectory.appendingPathComponent(name)
        let source = try String(contentsOf: dir.appendingPathComponent("storage.rules"), encoding: .utf8)
        let json = try Data(contentsOf: dir.appendingPathComponent("CASES.json"))
        let ruleset = try Ruleset.compile(source, fileName: "\(name)/storage.rules")
        let cases = try RulesTestFile.parse(Array(json))
        #expect(!cases.isEmpty)
        let result = RulesTestRunner.run(ruleset, cases: cases, explain: true)
        #expect(result.failed == 0, "\(result.lines.joined(separator: "\n"))")
        #expect(result.passed == cases.count)
    }

    /// The benchmark ruleset (used for the µs/decision figure) is also a correct ruleset with expected outcomes.
    @Test func benchmarkRulesetPassesItsCases() throws {
        let dir = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent("bench")
        let source = try String(contentsOf: dir.appendingPathComponent("storage.rules"), encoding: .utf8)
        let ruleset = try Ruleset.compile(source, fileName: "bench/storage.rules")
        let cases = try RulesTestFile.parse(Array(try Data(contentsOf: dir.appendingPathComponent("CASES.json"))))
        let result = RulesTestRunner.run(ruleset, cases: cases, explain: true)
        #expect(result.failed == 0, "\(result.lines.joined(separator: "\n"))")
        #expect(result.passed == 19)
    }

    @Test func publicCaseCountIs48() throws {
        var total = 0
        for name in Self.publicRulesets {
            let json = try Data(
                contentsOf: Self.conformanceDirectory.appendingPathComponent(name).appendingPathComponent("CASES.json"))
            total += try RulesTestFile.parse(Array(json)).count
        }
        #expect(total == 48)
    }
}
