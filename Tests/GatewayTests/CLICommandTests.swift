import Foundation
import Gateway
import Testing

@Suite struct CLICommandTests {
    static let ownerRules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /users/{uid}/{file=**} {
              allow read, write: if request.auth != null && request.auth.uid == uid;
            }
          }
        }

        """

    static let cases = """
        {"cases": [
          {"name": "owner reads", "method": "get", "bucket": "b", "path": "users/alice/a.txt",
           "auth": {"sub": "alice"}, "time": "2024-01-01T00:00:00Z", "expect": "allow"},
          {"name": "stranger reads", "method": "get", "bucket": "b", "path": "users/alice/a.txt",
           "auth": {"sub": "bob"}, "time": "2024-01-01T00:00:00Z", "expect": "deny"}
        ]}
        """

    @Test func versionAndHelp() throws {
        let version = try CLI.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("portcullis "))
        for arguments in [["serve", "--help"], ["help", "serve"]] {
            let help = try CLI.run(arguments)
            #expect(help.status == 0)
            for option in ConfigurationOption.all {
                #expect(
                    help.stdout.contains("--\(option.flag)" + (option.isSwitch ? "\n" : " \(option.valueName)")),
                    "\(arguments) lacks --\(option.flag)")
                #expect(help.stdout.contains(option.environment))
                if let value = option.defaultText { #expect(help.stdout.contains("default: \(value)")) }
            }
        }
        let none = try CLI.run([])
        #expect(none.status == 2)
        #expect(try CLI.run(["frobnicate"]).status == 2)
    }

    @Test(
        arguments: [
            (["serve", "--listen", "nope"], [:]),
            (["serve", "--max-object-bytes", "0"], [:]),
            (["serve", "--bogus"], [:]),
            (["serve"], ["PORTCULLIS_LOG_FORMAT": "xml"]),
            (["serve", "--rules", "/nonexistent/storage.rules"], [:]),
            (["serve", "--admin-key", "/nonexistent/admin.key"], [:]),
            (["serve", "--jwt-keys", "/nonexistent/keys.pem"], [:]),
            (["serve", "--signing-key", "short.key"], [:]),
            (["serve", "--jwt-keys", "short.key"], [:]),
            (["serve", "--rules", "short.key"], [:]),
            (["serve", "--bucket", "b=file:short.key"], [:]),
        ] as [([String], [String: String])])
    func badConfigurationExits2WithOneLine(arguments: [String], environment: [String: String]) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try "tiny\n".write(to: directory.appendingPathComponent("short.key"), atomically: true, encoding: .utf8)
        let outcome = try CLI.run(
            arguments + ["--listen=127.0.0.1:0"].filter { _ in !arguments.contains("--listen") },
            environment: environment, in: directory)
        #expect(outcome.status == 2, "\(arguments): \(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("portcullis: "))
        #expect(outcome.stderr.filter { $0 == "\n" }.count == 1, "not one line: \(outcome.stderr)")
    }

    @Test func rulesCheck() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.rules")
        try Self.ownerRules.write(to: good, atomically: true, encoding: .utf8)
        let ok = try CLI.run(["rules", "check", good.path])
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")

        let bad = directory.appendingPathComponent("bad.rules")
        try "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o { allow read: if foo( }\n}\n"
            .write(to: bad, atomically: true, encoding: .utf8)
        let failed = try CLI.run(["rules", "check", bad.path])
        #expect(failed.status == 1)
        let first = try #require(failed.stdout.split(separator: "\n").first)
        #expect(first.hasPrefix("\(bad.path):3:"), "\(failed.stdout)")
        #expect(first.split(separator: ":").count >= 4)

        #expect(try CLI.run(["rules", "check"]).status == 2)
    }

    @Test func rulesTest() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rules = directory.appendingPathComponent("storage.rules")
        try Self.ownerRules.write(to: rules, atomically: true, encoding: .utf8)
        let cases = directory.appendingPathComponent("cases.json")
        try Self.cases.write(to: cases, atomically: true, encoding: .utf8)

        let passing = try CLI.run(["rules", "test", rules.path, cases.path])
        #expect(passing.status == 0, "\(passing.stdout)\(passing.stderr)")
        #expect(passing.stdout.hasSuffix("2 passed, 0 failed\n"))

        let explained = try CLI.run(["rules", "test", rules.path, cases.path, "--explain"])
        #expect(explained.status == 0 && explained.stdout.contains("PASS owner reads"))

        let failingCases = directory.appendingPathComponent("failing.json")
        try Self.cases.replacingOccurrences(
            of: #""auth": {"sub": "bob"}, "time": "2024-01-01T00:00:00Z", "expect": "deny""#,
            with: #""auth": {"sub": "bob"}, "time": "2024-01-01T00:00:00Z", "expect": "allow""#
        )
        .write(to: failingCases, atomically: true, encoding: .utf8)
        let failing = try CLI.run(["rules", "test", rules.path, failingCases.path])
        #expect(failing.status == 1)
        #expect(failing.stdout.contains("FAIL stranger reads: expected allow, got deny"))
        #expect(failing.stdout.hasSuffix("1 passed, 1 failed\n"))

        let broken = directory.appendingPathComponent("broken.rules")
        try "service firebase.storage { match".write(to: broken, atomically: true, encoding: .utf8)
        #expect(try CLI.run(["rules", "test", broken.path, cases.path]).status == 1)
        #expect(try CLI.run(["rules", "test", rules.path]).status == 2)
    }

    @Test func tokenMinting() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("hs.key")
        try "a-development-hmac-secret-value\n".write(to: secret, atomically: true, encoding: .utf8)
        let minted = try CLI.run([
            "token", "--hmac-secret", secret.path, "--uid", "alice", "--claims", #"{"role":"x"}"#,
            "--ttl", "60", "--issuer", "iss", "--audience", "aud",
        ])
        #expect(minted.status == 0, "\(minted.stderr)")
        #expect(minted.stdout.split(separator: ".").count == 3)
        // No key given and no `make run` dev key directory where it runs (./data/dev-keys).
        #expect(try CLI.run(["token"], in: directory).status == 2)
        #expect(try CLI.run(["token", "--hmac-secret", secret.path, "--claims", "[1]"]).status == 2)
    }
}
