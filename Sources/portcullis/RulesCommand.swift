import Gateway
import PortcullisCore
import Rules

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis rules check FILE` and `portcullis rules test FILE CASES.json [--explain]` (docs/testing.md).
///
/// check: exit 0 when the file compiles (warnings are printed), else one `file:line:col: message` line per error
/// and exit 1. test: one line per failing case (every case with `--explain`, each with the deciding `match`/
/// `allow` or why nothing granted), then `N passed, M failed`; exit 1 on any failure, compile error or
/// unreadable cases file. Usage errors exit 2.
enum RulesCommand {
    static let help = """
        Usage:
          portcullis rules check FILE
          portcullis rules test FILE CASES.json [--explain]

        check: compile a rules file. Exit 0 when it compiles (warnings are printed as file:line:col: warning:
        lines); otherwise one file:line:col: message line per error, with a hint line under errors that have a
        likely cause (such as `=` written for `==` in a condition), and exit 1.
        test: run the cases in CASES.json against the file; one line per failing case (every case with
        --explain, each with the deciding match/allow or why nothing granted), then `N passed, M failed`.
        Exit 1 on any failure, compile error or unreadable cases file; 2 on a usage error.
        """

    static func run(_ arguments: [String]) -> Never {
        guard let sub = arguments.first else { Terminal.fail("rules: expected `check` or `test`\n\(help)") }
        if arguments.contains("--help") || arguments.contains("-h") {
            Terminal.print(help)
            exit(0)
        }
        let rest = Array(arguments.dropFirst())
        switch sub {
        case "check":
            guard rest.count == 1 else { Terminal.fail("usage: portcullis rules check FILE") }
            check(rest[0])
        case "test":
            let explain = rest.contains("--explain")
            let files = rest.filter { $0 != "--explain" }
            guard files.count == 2, !files.contains(where: { $0.hasPrefix("--") }) else {
                Terminal.fail("usage: portcullis rules test FILE CASES.json [--explain]")
            }
            test(files[0], cases: files[1], explain: explain)
        default:
            Terminal.fail("rules: unknown subcommand \"\(sub)\" (expected check or test)")
        }
    }

    private static func compile(_ path: String) -> Ruleset {
        let source: String
        let sourceBytes: [UInt8]
        switch Terminal.readFile(path) {
        case .success(let bytes):
            sourceBytes = bytes
            source = String(decoding: bytes, as: UTF8.self)
        case .failure(let failure):
            Terminal.printError("\(path): \(failure.reason)")
            exit(1)
        }
        do {
            let ruleset = try Ruleset.compile(source, fileName: path)
            for warning in ruleset.warnings {
                Terminal.print("\(warning.file):\(warning.line):\(warning.column): warning: \(warning.message)")
            }
            return ruleset
        } catch {
            for diagnostic in error.diagnostics {
                Terminal.print(diagnostic.description)
                if let hint = RulesHint.hint(for: diagnostic, in: sourceBytes) { Terminal.print(hint) }
            }
            exit(1)
        }
    }

    private static func check(_ path: String) -> Never {
        let ruleset = compile(path)
        Terminal.print("\(path): ok (rules_version \(ruleset.version))")
        exit(0)
    }

    private static func test(_ path: String, cases casesPath: String, explain: Bool) -> Never {
        let ruleset = compile(path)
        let cases: [RulesTestCase]
        switch Terminal.readFile(casesPath) {
        case .success(let bytes):
            do {
                cases = try RulesTestFile.parse(bytes)
            } catch {
                Terminal.printError("\(casesPath): \(error)")
                exit(1)
            }
        case .failure(let failure):
            Terminal.printError("\(casesPath): \(failure.reason)")
            exit(1)
        }
        let report = RulesTestReport.run(ruleset, cases: cases, explain: explain)
        for line in report.lines { Terminal.print(line) }
        Terminal.print("\(report.passed) passed, \(report.failed) failed")
        exit(report.failed == 0 ? 0 : 1)
    }
}

/// Runs rules test cases and formats the outcome lines.
enum RulesTestReport {
    static func run(_ ruleset: Ruleset, cases: [RulesTestCase], explain: Bool)
        -> (lines: [String], passed: Int, failed: Int)
    {
        var lines: [String] = []
        var passed = 0, failed = 0
        for testCase in cases {
            let decision = ruleset.evaluate(testCase.request)
            let ok = decision.allowed == testCase.expectAllow
            if ok { passed += 1 } else { failed += 1 }
            guard !ok || explain else { continue }
            let expected = testCase.expectAllow ? "allow" : "deny"
            let got = decision.allowed ? "allow" : "deny"
            var line = ok ? "PASS \(testCase.name): \(got)" : "FAIL \(testCase.name): expected \(expected), got \(got)"
            line += " (\(testCase.request.method.rawValue) b/\(testCase.request.bucket)/o/\(testCase.request.path))"
            if let why = ruleset.explain(testCase.request).explanation, !why.isEmpty {
                for explanationLine in why.bytesSplit(separator: 0x0A) { line += "\n    \(explanationLine)" }
            }
            lines.append(line)
        }
        return (lines, passed, failed)
    }
}
