import Foundation
import Testing

@testable import Rules

@Suite struct ParserTests {
    @Test func fullGrammarCompiles() throws {
        let source = """
            rules_version = '2';  // version first
            /* block comment
               over lines */
            function fileLevel(a, b) { return a + b; }
            service firebase.storage {
              function serviceLevel(x) {
                let doubled = x * 2;
                let more = doubled + 1;
                return more
              }
              match /b/{bucket}/o {
                match /users/{userId}/{file=*} {
                  function owner() { return request.auth.uid == userId; }
                  allow read
                  allow get, list: if owner();
                  allow create, update: if owner() && request.resource.size < 10 * 1024
                    && request.resource.contentType.matches('image/.*');
                  allow delete: if fileLevel(1, 2) == 3 ? serviceLevel(1) == 3 : false;
                }
                match /{pre=**}/songs/user:12345/profile.photo.png {
                  allow read: if [1, 2, 3,][0:2] == [1, 2] && {'a': 1, 'b': [2],}['b'][0] == 2
                    && 'x' in ['x'] && 1 is int && -1 < 0 && !false && 1.5e3 == 1500.0 && b'\\x2A' == b'*'
                    && "d\\"q" == 'd"q' && r'\\d' == '\\\\d' && '\\u00e9' == 'é' && 'abc'[1:] == 'bc' && 'abc'[:1] == 'a'
                    && /databases/$(pre)/documents/(default) != null && 7 % 3 == 1 && 7 / 2 == 3;
                }
              }
            }
            """
        let ruleset = try Ruleset.compile(source, fileName: "full.rules")
        #expect(ruleset.version == 2)
        #expect(ruleset.program.blocks.count == 1)
        #expect(ruleset.program.blocks[0].children.count == 2)
        #expect(ruleset.program.blocks[0].children[0].allows.count == 4)
        #expect(ruleset.program.functions.count == 3)
    }

    @Test func versionDefaultsToOneAndOptionalSemicolons() throws {
        let r = try Ruleset.compile(
            "service firebase.storage { match /b/{bucket}/o/{x} { allow read } }", fileName: "f")
        #expect(r.version == 1)
        let r2 = try Ruleset.compile(
            "rules_version = \"2\"\nservice firebase.storage { match /b/{bucket}/o/{x} { allow read; allow write: if true } }",
            fileName: "f")
        #expect(r2.version == 2)
    }

    @Test(arguments: [
        ("1 + 2 * 3 == 7", "true"),
        ("(1 + 2) * 3", "9"),
        ("10 - 4 - 3", "3"),
        ("2 * 3 % 4", "2"),
        ("-2 * 3", "-6"),
        ("- -2", "2"),
        ("!true == false", "true"),
        ("true || false && false", "true"),
        ("(true || false) && false", "false"),
        ("1 < 2 == 2 < 3", "true"),
        ("1 in [1] == true", "true"),
        ("1 + 1 in [2]", "true"),
        ("2 is int == true", "true"),
        ("true ? 1 : 2 + 10", "1"),
        ("false ? 1 : true ? 2 : 3", "2"),
        ("[[1, 2], [3]][0][1]", "2"),
        ("{'a': {'b': 'c'}}.a.b", "'c'"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("1.5", "1.5"),
        ("2e3", "2000.0"),
        ("'a\\tb'.size()", "3"),
        ("'\\x41\\101\\u0041\\U00000041'", "'AAAA'"),
        ("b'\\x2A' == b'\\052'", "true"),
        ("'it\\'s'", "'it's'"),
    ])
    func precedenceAndLiterals(_ expr: String, _ expected: String) {
        #expect(TS.eval(expr) == expected, "\(expr)")
    }

    @Test func pathLiterals() throws {
        #expect(TS.eval("/a/b/c == path('a/b/c')") == "true")
        #expect(TS.eval("/databases/(default)/documents/x[1]") == "'(default)'")
        #expect(TS.eval("/users/$(request.auth.uid)/x", request: TS.request(uid: "u1")) == "path('/users/u1/x')")
        #expect(TS.eval("/a/b/c / 2") == "error")  // a path is not a number
    }

    @Test func byteOrderMarkAndCRLFAreAccepted() throws {
        let r = try Ruleset.compile(
            "\u{FEFF}rules_version = '2';\r\nservice firebase.storage {\r\n  match /b/{b}/o/{x} { allow read; }\r\n}\r\n",
            fileName: "f")
        #expect(r.evaluate(TS.request(.get, "a")).allowed)
        #expect(
            TS.diagnostics("\u{FEFF}service firebase.storage { match /b { allow read: if y; } }") == [
                "1:54: unknown identifier 'y'"
            ])
    }

    @Test func allowTextIsRecordedForExplain() throws {
        let r = try Ruleset.compile(TS.wrap("request.auth  !=\n   null"), fileName: "f")
        #expect(r.program.blocks[0].allows[0].text == "allow read: if request.auth != null")
    }

    @Test func matchPatternsWithOddLiteralSegments() throws {
        let r = try Ruleset.compile(
            """
            service firebase.storage { match /b/{bucket}/o { match /user:12345/profile.photo.png { allow read; } } }
            """, fileName: "f")
        #expect(r.evaluate(TS.request(.get, "user:12345/profile.photo.png")).allowed)
        #expect(!r.evaluate(TS.request(.get, "user:12345/profile-photo.png")).allowed)
    }

    // MARK: Compile errors, each with its position

    @Test(arguments: [
        // (source, expected first diagnostic prefix "line:col: message-fragment")
        (
            TS.wrap("true").replacingOccurrences(of: "if true", with: "true"),
            "4:17: Missing 'if' before conditional expression."
        ),
        ("service firebase.storage {{", "1:27: expected 'match', 'function' or '}' in the service body"),
        ("service firebase.storage {", "1:27: unexpected end of file: missing '}'"),
        ("rules_version = '3';\nservice firebase.storage {}", "1:17: unsupported rules_version '3'"),
        ("rules_version = 2;\nservice firebase.storage {}", "1:17: rules_version must be a string"),
        ("service cloud.firestore {}", "1:9: unsupported service 'cloud.firestore'"),
        ("service firebase.storage { allow read; }", "1:28: 'allow' must be inside a 'match' block"),
        ("match /x { }", "1:1: 'match' must be inside"),
        ("rules_version = '2';", "1:21: missing 'service firebase.storage"),
        ("service firebase.storage {}\nservice firebase.storage {}", "2:1: only one service declaration"),
        ("service firebase.storage {}\nrules_version = '2';", "2:1: rules_version must come before"),
        ("service firebase.storage { match b/{bucket}/o { } }", "1:34: a match pattern must start with '/'"),
        ("service firebase.storage { match /a/{x { } }", "1:39: expected '}' to close wildcard {x"),
        ("service firebase.storage { match /a/{x=***} { } }", "1:37: expected '*' or '**'"),
        ("service firebase.storage { match /a/b{x} { } }", "1:38: a wildcard must be a whole path segment"),
        ("service firebase.storage { match /a/{x}b { } }", "1:40: a wildcard must be a whole path segment"),
        ("service firebase.storage { match /a { allow reed; } }", "1:45: expected a method"),
        (TS.wrap("'abc"), "4:20: unterminated string literal"),
        (TS.wrap("'a\\.b' == 'a'"), "4:22: invalid escape sequence '\\.'"),
        (TS.wrap("1 +"), "4:23: expected an expression, found ';'"),
        (TS.wrap("(1 + 2"), "4:26: expected ')' to close the parenthesis"),
        (TS.wrap("1 & 2"), "4:22: unexpected '&'; did you mean '&&'?"),
        (TS.wrap("99999999999999999999 > 1"), "4:20: integer literal 99999999999999999999 is out of the 64-bit range"),
        (TS.wrap("1 is text"), "4:25: unknown type 'text' after 'is'"),
        (TS.wrap("x == 1"), "4:20: unknown identifier 'x'"),
        (TS.wrap("nope(1)"), "4:20: unknown function 'nope'"),
        (TS.wrap("get(/databases/x) != null"), "4:20: unknown function 'get' (Firestore-only"),
        (TS.wrap("math == 1"), "4:20: 'math' is a library namespace and cannot be used as a value"),
        (TS.wrap("math.nope(1) == 1"), "4:25: unknown function 'math.nope'"),
        (TS.wrap("math.abs == 1"), "4:25: 'math.abs' is a library function and must be called"),
        (TS.wrap("math.abs(1, 2) == 1"), "4:25: 'math.abs' takes 1 argument, called with 2"),
        // Constant arguments of the wrong count are not folded (the library reads arguments by position).
        (TS.wrap("timestamp.date(2020, 1) == null"), "4:30: 'timestamp.date' takes 3 arguments, called with 2"),
        (TS.wrap("duration.time(1, 2, 3, 4, 5) == null"), "4:29: 'duration.time' takes 4 arguments, called with 5"),
        (TS.wrap("math.pow(2) == 1"), "4:25: 'math.pow' takes 2 arguments, called with 1"),
        (TS.wrap("'a'.matches() "), "4:24: method 'matches' takes 1 argument, called with 0"),
        (TS.wrap("(1)(2)"), "4:23: only functions can be called"),
    ])
    func compileErrorsCarryPositions(_ source: String, _ expected: String) {
        let diags = TS.diagnostics(source)
        #expect(diags.first?.hasPrefix(expected) == true, "got \(diags)")
    }

    @Test(arguments: [
        (
            "rules_version = '2';\nfunction f(x) { return g(x); }\nfunction g(x) { return f(x); }\nservice firebase.storage {}",
            "2:1: recursive function calls are not allowed: f -> g -> f"
        ),
        (
            "rules_version = '2';\nfunction f(x) { return f(x); }\nservice firebase.storage {}",
            "2:1: recursive function calls are not allowed: f -> f"
        ),
        (
            "rules_version = '2';\nfunction f(x) { return x; }\nservice firebase.storage { match /b/{b}/o { allow read: if f(1, 2); } }",
            "3:60: function 'f' takes 1 argument, called with 2"
        ),
        (
            "rules_version = '2';\nfunction f(a,b,c,d,e,f2,g,h) { return a; }\nservice firebase.storage {}",
            "2:1: function 'f' has 8 parameters; the limit is 7"
        ),
        (
            "rules_version = '2';\nfunction f() { let a=1; let b=1; let c=1; let d=1; let e=1; let f1=1; let g=1; let h=1; let i=1; let j=1; let k=1; return a; }\nservice firebase.storage {}",
            "2:1: function 'f' has 11 let bindings; the limit is 10"
        ),
        (
            "function f() { let a = 1; return a; }\nservice firebase.storage {}",
            "1:20: 'let' bindings require rules_version = '2'"
        ),
        (
            "function f() { return 1; }\nfunction f() { return 2; }\nservice firebase.storage {}",
            "2:1: function 'f' is already defined in this scope"
        ),
        ("function f(a, a) { return a; }\nservice firebase.storage {}", "1:15: duplicate parameter 'a'"),
        (
            "function f() { return 1 }\nservice firebase.storage { match /b/{b}/o { allow read: if f; } }",
            "2:60: 'f' is a function and must be called"
        ),
        (
            "service firebase.storage { match /b/{b}/o/{rest=**}/x { allow read; } }",
            "1:43: a recursive wildcard must be the last segment under rules_version '1'"
        ),
        (
            "rules_version = '2';\nservice firebase.storage { match /b/{b}/o/{a=**}/{c=**} { allow read; } }",
            "2:50: only one recursive wildcard"
        ),
        ("service firebase.storage { match /b/{b}/o/{x}/{x} { allow read; } }", "1:47: wildcard 'x' appears twice"),
        ("service firebase.storage { match /b/{request}/o { allow read; } }", "1:37: 'request' is a reserved name"),
        ("function f(duration) { return 1; }\nservice firebase.storage {}", "1:12: 'duration' is a reserved name"),
        (
            "function f() { return y; }\nservice firebase.storage { match /b/{y}/o { allow read: if f(); } }",
            "1:23: unknown identifier 'y'"
        ),
    ])
    func checkerErrors(_ source: String, _ expected: String) {
        let diags = TS.diagnostics(source)
        #expect(diags.contains { $0.hasPrefix(expected) }, "got \(diags)")
    }

    @Test func limitsAreEnforced() {
        // Match nesting deeper than 10.
        var nested = "service firebase.storage { "
        for i in 0..<11 { nested += "match /s\(i) { " }
        nested += String(repeating: "} ", count: 11) + "}"
        #expect(TS.diagnostics(nested).first?.contains("nested more than 10 deep") == true)
        // More than 20 captures.
        let captures = (0..<21).map { "/{c\($0)}" }.joined()
        #expect(
            TS.diagnostics("service firebase.storage { match \(captures) { allow read; } }").first?
                .contains("more than 20 wildcard variables") == true)
        // Expression nesting.
        let deep = String(repeating: "(", count: 150) + "true" + String(repeating: ")", count: 150)
        #expect(TS.diagnostics(TS.wrap(deep)).first?.contains("nested too deep") == true)
        let longChain = (0..<150).map { _ in "1" }.joined(separator: " + ")
        #expect(TS.diagnostics(TS.wrap("\(longChain) > 0")).first?.contains("nested too deep") == true)
        // Source size.
        let big = "// " + String(repeating: "x", count: 300 * 1024) + "\nservice firebase.storage {}"
        #expect(TS.diagnostics(big).first?.contains("the limit is 262144") == true)
    }

    @Test func errorDescriptionIsOneLinePerDiagnostic() {
        do {
            _ = try Ruleset.compile(TS.wrap("a == b"), fileName: "storage.rules")
            Issue.record("expected an error")
        } catch {
            #expect(
                error.description
                    == "storage.rules:4:20: unknown identifier 'a'\nstorage.rules:4:25: unknown identifier 'b'")
        }
    }

    @Test func warningsForRuntimeOnlyProblems() throws {
        let r = try Ruleset.compile(
            TS.wrap("'x'.matches('(a') || firestore.exists(/databases/x) || 'a'.frobnicate()"), fileName: "w.rules")
        let text = r.warnings.map(\.description).joined(separator: "\n")
        #expect(text.contains("w.rules:4:32: invalid regular expression '(a'"))
        #expect(text.contains("firestore.exists() is not supported"))
        #expect(text.contains("no type has a method 'frobnicate'"))
        let overlap = try Ruleset.compile(
            "service firebase.storage { match /b/{b}/o/{x} { allow read; allow get, create: if true; allow update; } }",
            fileName: "o")
        #expect(
            overlap.warnings.map(\.description) == [
                "o:1:61: methods overlap with an earlier allow in this match block (harmless: any one granting allows)"
            ])
    }
}
