import PortcullisCore
import Testing

@testable import Rules

@Suite struct EvaluatorTests {
    // An expression that is an error (missing map key).
    static let err = "{}.missing"

    @Test(arguments: [
        // && and || truth table of docs/rules-language.md, with errors on either side.
        ("true && true", "true"), ("true && false", "false"), ("true && E", "error"),
        ("false && true", "false"), ("false && false", "false"), ("false && E", "false"),
        ("E && true", "error"), ("E && false", "false"), ("E && E", "error"),
        ("true || true", "true"), ("true || false", "true"), ("true || E", "true"),
        ("false || true", "true"), ("false || false", "false"), ("false || E", "error"),
        ("E || true", "true"), ("E || false", "error"), ("E || E", "error"),
        ("!E", "error"), ("E ? 1 : 2", "error"), ("true ? 1 : E", "1"), ("false ? E : 2", "2"),
        ("1 && true", "error"), ("true || 1", "true"), ("false || 1", "error"), ("!1", "error"), ("1 ? 2 : 3", "error"),
        ("E == null", "error"), ("E != 1", "error"), ("E is map", "error"), ("[E]", "error"), ("{'a': E}", "error"),
    ])
    func errorAbsorption(_ expr: String, _ expected: String) {
        #expect(TS.eval(expr.replacingOccurrences("E", with: Self.err)) == expected, "\(expr)")
    }

    @Test(arguments: [
        ("1 + 2", "3"), ("1 + 2.5", "3.5"), ("2.5 - 1", "1.5"), ("7 / 2", "3"), ("-7 / 2", "-3"), ("7 % 3", "1"),
        ("-7 % 3", "-1"), ("7.0 / 2", "3.5"), ("1 / 0", "error"), ("1 % 0", "error"), ("1.0 / 0", "Infinity"),
        ("9223372036854775807 + 1", "error"), ("-9223372036854775808 - 1", "error"),
        ("9223372036854775807 * 2", "error"),
        ("-9223372036854775808 / -1", "error"), ("-(-9223372036854775808)", "error"),
        ("'a' + 'b'", "'ab'"), ("[1] + [2]", "[1, 2]"), ("'a' + 1", "error"), ("1 + 'a'", "error"),
        ("null + 1", "error"), ("true + true", "error"), ("-'a'", "error"), ("-1.5", "-1.5"),
    ])
    func arithmetic(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("1 < 2", "true"), ("2 <= 2", "true"), ("3 > 2.5", "true"), ("2.5 >= 3", "false"), ("'a' < 'b'", "true"),
        ("'B' < 'a'", "true"), ("'abc' < 'abd'", "true"), ("'5' < 6", "error"), ("null < 1", "error"),
        ("true < false", "error"), ("[1] < [2]", "error"),
        ("timestamp.value(1000) < timestamp.value(2000)", "true"),
        ("duration.value(1, 'h') > duration.value(59, 'm')", "true"),
        ("request.time > timestamp.date(2026, 1, 1)", "true"),
    ])
    func comparison(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("1 == 1.0", "true"), ("1 != 1.0", "false"), ("[1] == [1.0]", "false"), ("{'a': 1} == {'a': 1.0}", "false"),
        ("'1' == 1", "false"), ("'true' == true", "false"), ("null == null", "true"), ("null == false", "false"),
        ("[1, [2, 'x']] == [1, [2, 'x']]", "true"), ("{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", "true"),
        ("[1, 2] == [2, 1]", "false"), ("[1, 2].toSet() == [2, 1, 1].toSet()", "true"), ("b'a' == b'a'", "true"),
        ("path('a/b') == /a/b", "true"), ("path('a/b') == 'a/b'", "false"),
        ("timestamp.value(5) == timestamp.value(5)", "true"), ("0.0 / 0 == 0.0 / 0", "false"),
    ])
    func equality(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("1 in [1, 2]", "true"), ("3 in [1, 2]", "false"), ("'a' in {'a': 1}", "true"), ("'b' in {'a': 1}", "false"),
        ("1 in {'a': 1}", "false"), ("1 in [1].toSet()", "true"), ("'a' in 'abc'", "error"), ("1 in null", "error"),
        ("1 is int", "true"), ("1 is float", "false"), ("1.0 is float", "true"), ("1 is number", "true"),
        ("1.5 is number", "true"), ("'a' is string", "true"), ("[] is list", "true"), ("{} is map", "true"),
        ("null is null", "true"), ("true is bool", "true"), ("b'' is bytes", "true"), ("[].toSet() is set", "true"),
        ("request.time is timestamp", "true"), ("duration.value(1, 's') is duration", "true"),
        ("path('a') is path", "true"), ("latlng.value(1.0, 2.0) is latlng", "true"), ("request is map", "true"),
        ("{}.diff({}) is map_diff", "true"), ("'a' is int", "false"),
    ])
    func membershipAndTypes(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("[1, 2, 3][1]", "2"), ("[1][1]", "error"), ("[1][-1]", "error"), ("[1]['a']", "error"), ("{'a': 1}['a']", "1"),
        ("{'a': 1}['b']", "error"), ("{'a': 1}.b", "error"), ("{'a': 1}[0]", "error"), ("null.a", "error"),
        ("null[0]", "error"), ("'héllo'[1]", "'é'"), ("'😀'.size()", "2"), ("'abc'[3]", "error"),
        ("[1, 2, 3][1:]", "[2, 3]"),
        ("[1, 2, 3][:2]", "[1, 2]"), ("[1, 2, 3][1:1]", "[]"), ("[1, 2, 3][2:1]", "error"), ("[1][0:5]", "error"),
        ("'hello'[1:3]", "'el'"), ("1.a", "error"), ("'a'.b", "error"), ("1[0]", "error"),
    ])
    func memberAndIndex(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    // MARK: request and resource

    @Test func requestFields() {
        let req = TS.request(
            .get, "images/cat.png", uid: "u1",
            claims: [
                "admin": .bool(true), "email": .string("a@b.c"), "iat": .int(1_700_000_000),
                "firebase": .object([
                    "sign_in_provider": .string("password"),
                    "identities": .object(["email": .array([.string("a@b.c")])]),
                ]),
            ])
        #expect(TS.eval("request.auth.uid", request: req) == "'u1'")
        #expect(TS.eval("request.auth.token.admin == true", request: req) == "true")
        #expect(TS.eval("request.auth.token.email", request: req) == "'a@b.c'")
        #expect(TS.eval("request.auth.token.iat", request: req) == "1700000000")
        #expect(TS.eval("request.auth.token.firebase.sign_in_provider", request: req) == "'password'")
        #expect(TS.eval("request.auth.token.firebase.identities['email'][0]", request: req) == "'a@b.c'")
        #expect(TS.eval("request.auth.token.missing", request: req) == "error")
        #expect(TS.eval("'admin' in request.auth.token", request: req) == "true")
        #expect(TS.eval("request.auth.token.get('nope', 'dflt')", request: req) == "'dflt'")
        #expect(TS.eval("request.path", request: req) == "path('/b/app.appspot.com/o/images/cat.png')")
        #expect(
            TS.eval(
                "request.path[0] == 'b' && request.path[1] == 'app.appspot.com' && request.path[2] == 'o' && request.path[3] == 'images'",
                request: req) == "true")
        #expect(TS.eval("request.path == path('/b/app.appspot.com/o/images/cat.png')", request: req) == "true")
        #expect(TS.eval("request.time == timestamp.value(\(TS.now.millisecondsSinceEpoch))", request: req) == "true")
        #expect(TS.eval("request.method", request: req) == "'get'")
        #expect(TS.eval("request.resource", request: req) == "null")
        #expect(TS.eval("request.resource.size", request: req) == "error")
        #expect(TS.eval("request.nothing", request: req) == "error")
        #expect(TS.eval("request.auth == null") == "true")
        #expect(TS.eval("request.auth.uid") == "error")
        #expect(TS.eval("request.auth.keys().size()", request: req) == "2")
    }

    @Test func resourceFields() {
        let stored = TS.meta("a/b.txt", size: 1234, contentType: "text/plain", custom: ["owner": "u1"])
        let req = TS.request(
            .update, "a/b.txt", resource: stored,
            requestResource: TS.meta("a/b.txt", size: 1234, contentType: "image/png"))
        let expected: [(String, String)] = [
            ("resource.name", "'a/b.txt'"), ("resource.bucket", "'app.appspot.com'"),
            ("resource.generation", "1717171717171"), ("resource.metageneration", "3"), ("resource.size", "1234"),
            ("resource.timeCreated", "timestamp(2024-05-31T16:08:37.171Z)"), ("resource.updated.year()", "2024"),
            ("resource.md5Hash", "'XrY7u+Ae7tCTyyK7j1rNww=='"), ("resource.crc32c", "'yZRlqg=='"),
            ("resource.etag", "'1717171717171/3'"), ("resource.contentDisposition", "'inline'"),
            ("resource.contentEncoding", "'identity'"), ("resource.contentLanguage", "'en'"),
            ("resource.contentType", "'text/plain'"), ("resource.metadata", "{'owner': 'u1'}"),
            ("resource.metadata.owner", "'u1'"), ("resource.metadata.other", "error"),
            ("'owner' in resource.metadata", "true"),
            ("resource.size is int", "true"), ("resource.timeCreated is timestamp", "true"),
            ("resource.cacheControl", "error"),
            ("request.resource.contentType", "'image/png'"), ("request.resource.metadata", "{}"),
            ("request.resource.generation", "error"), ("request.resource.etag", "error"),
            ("request.resource.timeCreated", "error"),
            ("'size' in request.resource", "true"), ("'generation' in request.resource", "false"),
            ("request.resource.metadata.keys()", "[]"),
            ("resource.keys().size()", "15"), ("request.resource.keys().size()", "10"),
            ("resource == resource", "true"), ("resource.metadata == {'owner': 'u1'}", "true"),
            ("request.resource.diff(resource).changedKeys()", "set('contentType', 'metadata')"),
        ]
        for (expr, value) in expected {
            #expect(TS.eval(expr, request: req) == value, "\(expr)")
        }
        #expect(TS.eval("resource == null") == "true")
        #expect(TS.eval("resource.size") == "error")
    }

    // MARK: functions and limits

    @Test func functionsParamsAndLets() {
        let fns = """
            function add(a, b) { return a + b; }
            function twice(x) { let y = add(x, x); let z = y + 0; return z; }
            function lazy(x) { return x > 0 || {}.missing; }
            """
        #expect(TS.eval("twice(21)", functions: fns) == "42")
        #expect(TS.eval("lazy(1)", functions: fns) == "true")
        #expect(TS.eval("lazy(0)", functions: fns) == "error")
        // An argument that is an error makes the call an error (fail closed), even if unused.
        #expect(TS.eval("add({}.missing, 1) == 1 || true", functions: fns) == "true")
        #expect(TS.eval("add({}.missing, 1)", functions: fns) == "error")
    }

    @Test func functionsSeeTheirDeclaringScope() throws {
        let r = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o {
                match /users/{userId} {
                  function isOwner() { return request.auth.uid == userId; }
                  match /{file} { allow read: if isOwner() && file.size() > 0; }
                }
              }
            }
            """, fileName: "f")
        #expect(r.evaluate(TS.request(.get, "users/u1/x", uid: "u1")).allowed)
        #expect(!r.evaluate(TS.request(.get, "users/u1/x", uid: "u2")).allowed)
    }

    @Test func callDepthIsLimited() {
        // A chain of 25 functions: f0 calls f1 ... f24; depth > 20 is an error.
        var fns = ""
        for i in 0..<24 { fns += "function f\(i)(x) { return f\(i + 1)(x); }\n" }
        fns += "function f24(x) { return x; }\n"
        #expect(TS.eval("f0(true)", functions: fns) == "error")
        #expect(TS.eval("f10(true)", functions: fns) == "true")  // 15 deep: fine
    }

    @Test func expressionBudgetIsLimited() {
        let items = Array(repeating: "1", count: 1100).joined(separator: ", ")
        #expect(TS.eval("[\(items)].size() > 0") == "error")
        let fewer = Array(repeating: "1", count: 500).joined(separator: ", ")
        #expect(TS.eval("[\(fewer)].size() > 0") == "true")
    }

    @Test func valuesAreBounded() {
        // Doubling a string 25 times would reach 32 MiB: refused at 1 MiB.
        var fns = "function d0(s) { return s + s; }\n"
        for i in 1..<26 { fns += "function d\(i)(s) { return d\(i - 1)(s) + d\(i - 1)(s); }\n" }
        #expect(TS.eval("d25('x').size() > 0", functions: fns) == "error")
    }

    // MARK: matching

    @Test func matchingRulesV2() throws {
        let r = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o {
                match /{pre=**}/songs/{track} { allow read: if pre.size() >= 0 && track.size() > 0; }
                match /a/{rest=**} {
                  allow get: if rest == path('');
                  match /deep/{f} { allow get: if rest.size() == 0 && f == 'x'; }
                }
              }
            }
            """, fileName: "f")
        #expect(r.evaluate(TS.request(.get, "songs/a.mp3")).allowed)
        #expect(r.evaluate(TS.request(.get, "x/y/songs/a.mp3")).allowed)
        #expect(!r.evaluate(TS.request(.get, "songs/a/b.mp3")).allowed)
        #expect(r.evaluate(TS.request(.get, "a")).allowed)  // {rest=**} takes zero segments
        #expect(!r.evaluate(TS.request(.get, "a/b")).allowed)  // rest == /b, not empty
        #expect(r.evaluate(TS.request(.get, "a/deep/x")).allowed)  // parent ** takes zero segments, child the rest
    }

    @Test func capturedPathsAreBoundAsPaths() throws {
        let r = try Ruleset.compile(
            """
            service firebase.storage {
              match /b/{bucket}/o/{all=**} { allow get: if all[0] == 'x' && all[1] == 'y' && all.size() == 2 && bucket == 'app.appspot.com'; }
            }
            """, fileName: "f")
        #expect(r.evaluate(TS.request(.get, "x/y")).allowed)
        #expect(!r.evaluate(TS.request(.get, "x/y/z")).allowed)
    }

    @Test func listUnderV1IsDeniedWithAWarning() throws {
        let warnings = Collected()
        let r = try Ruleset.compile(
            "service firebase.storage { match /b/{bucket}/o/{all=**} { allow read; } }", fileName: "f"
        )
        .with(warningHandler: { warnings.add($0) })
        #expect(!r.evaluate(TS.request(.list, "x")).allowed)
        #expect(!r.evaluate(TS.request(.list, "y")).allowed)
        #expect(r.evaluate(TS.request(.get, "x")).allowed)
        #expect(warnings.all.count == 1)
        #expect(
            r.explain(TS.request(.list, "x")).explanation
                == "denied: list operations are only allowed for rules_version = '2'")
    }

    @Test func listOfAFolderIsARequestForAnUnknownChild() throws {
        // docs/rules-language.md, "Listing and wildcards": `match /{uid}/{file}` with `allow read` permits listing `uid/`; the child wildcard is unbound.
        let r = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o {
                match /{uid}/{file} { allow read: if request.auth.uid == uid; }
                match /named/{file} { allow list: if file == 'x'; }
                match /lit/fixed { allow list; }
              }
            }
            """, fileName: "f")
        #expect(r.evaluate(TS.request(.list, "u1", uid: "u1")).allowed)
        #expect(!r.evaluate(TS.request(.list, "u1", uid: "u2")).allowed)
        #expect(!r.evaluate(TS.request(.list, "named", uid: "u1")).allowed)  // using the unbound wildcard is an error
        #expect(!r.evaluate(TS.request(.list, "lit", uid: "u1")).allowed)  // a literal never takes the unknown child
        #expect(r.evaluate(TS.request(.list, "lit/fixed", uid: "u1")).allowed)
        let why = r.explain(TS.request(.list, "named", uid: "u1")).explanation ?? ""
        #expect(why.contains("wildcard 'file' has no value in a list request"))
    }

    @Test func methodUmbrellas() throws {
        let r = try Ruleset.compile(
            "rules_version = '2';\nservice firebase.storage { match /b/{b}/o/{x} { allow read; allow update; } }",
            fileName: "f")
        #expect(r.evaluate(TS.request(.get, "a")).allowed)
        #expect(r.evaluate(TS.request(.list, "a")).allowed)
        #expect(r.evaluate(TS.request(.update, "a")).allowed)
        #expect(!r.evaluate(TS.request(.create, "a")).allowed)
        #expect(!r.evaluate(TS.request(.delete, "a")).allowed)
    }

    @Test func nonBooleanConditionDoesNotGrant() throws {
        let r = try Ruleset.compile(TS.wrap("1"), fileName: "f")
        #expect(!r.evaluate(TS.request(.get, "a")).allowed)
        #expect(r.explain(TS.request(.get, "a")).explanation?.contains("non-boolean") == true)
    }

    // MARK: explain, debug, firestore

    @Test func explainNamesTheDecidingStatement() throws {
        let r = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o {
                match /public/{f} { allow read; }
                match /private/{f} {
                  allow read: if request.auth.uid == 'admin';
                  allow write: if false;
                }
              }
            }
            """, fileName: "storage.rules")
        let ok = r.explain(TS.request(.get, "public/x"))
        #expect(ok.allowed)
        #expect(
            ok.explanation
                == "allowed: 'allow read' at storage.rules:4:25 in match /b/{bucket}/o/public/{f} evaluated to true")
        let denied = r.explain(TS.request(.get, "private/x"))
        #expect(!denied.allowed)
        #expect(
            denied.explanation
                == """
                denied: no allow statement for 'get' on /b/app.appspot.com/o/private/x evaluated to true
                  'allow read: if request.auth.uid == 'admin'' at storage.rules:6:7 in match /b/{bucket}/o/private/{f} failed: Property uid is undefined on object request.auth.
                """.replacingOccurrences(
                    "Property uid is undefined on object request.auth.",
                    with: "Null value error. Cannot read property 'uid' of null."))
        #expect(
            r.explain(TS.request(.get, "other/x")).explanation
                == "denied: no match block completely matches /b/app.appspot.com/o/other/x")
        #expect(
            r.explain(TS.request(.create, "public/x")).explanation
                == "denied: 1 match block(s) match /b/app.appspot.com/o/public/x but none has an allow for 'create'")
        #expect(r.evaluate(TS.request(.get, "public/x")) == RulesDecision(allowed: true, explanation: nil))
    }

    @Test func debugGoesToTheHandlerAndShortCircuitSkipsIt() throws {
        let out = Collected()
        let r = try Ruleset.compile(
            TS.wrap("debug(1 + 1) == 2 && (false && debug('never') == 1 || debug([request.path[3]]) != null)"),
            fileName: "f"
        )
        .with(debugHandler: { out.add($0) })
        #expect(r.evaluate(TS.request(.get, "x/y")).allowed)
        #expect(out.all == ["2", "['x']"])
    }

    @Test func firestoreCallsDenyAndWarnOnce() throws {
        let warnings = Collected()
        let r = try Ruleset.compile(
            TS.wrap("firestore.exists(/databases/(default)/documents/users/x) || request.auth != null"), fileName: "f"
        )
        .with(warningHandler: { warnings.add($0) })
        #expect(!r.evaluate(TS.request(.get, "a")).allowed)
        #expect(r.evaluate(TS.request(.get, "a", uid: "u")).allowed)  // error || true = true
        #expect(!r.evaluate(TS.request(.get, "a")).allowed)
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.hasPrefix("firestore.exists()") == true)
    }

    @Test func denyAllDeniesEverything() {
        for m in RulesMethod.allCases {
            #expect(!Ruleset.denyAll.evaluate(TS.request(m, "a/b")).allowed)
        }
    }
}

extension String {
    func replacingOccurrences(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

@Suite struct ConcurrencyTests {
    /// One compiled Ruleset shared by many tasks gives the same answers as sequential evaluation.
    @Test func sharedRulesetIsSafeAcrossTasks() async throws {
        let ruleset = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o/users/{uid}/{file} {
                allow read: if request.auth.uid == uid && file.matches('[a-z]+\\\\.png');
              }
            }
            """, fileName: "c.rules")
        let results = await withTaskGroup(of: Bool.self, returning: [Bool].self) { group in
            for i in 0..<200 {
                group.addTask {
                    let owner = i % 2 == 0 ? "u\(i)" : "other"
                    return ruleset.evaluate(TS.request(.get, "users/u\(i)/pic.png", uid: owner)).allowed == (i % 2 == 0)
                }
            }
            var all: [Bool] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(results.count == 200)
        #expect(results.allSatisfy { $0 })
    }
}
