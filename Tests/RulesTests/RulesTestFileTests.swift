import PortcullisCore
import Testing

@testable import Rules

@Suite struct RulesTestFileTests {
    static let caseFile = """
        {"cases": [
          {"name": "owner reads", "method": "get", "bucket": "b1", "path": "users/u1/a.txt",
           "auth": {"sub": "u1", "email": "a@b.c", "admin": true},
           "resource": {"name": "users/u1/a.txt", "bucket": "b1", "generation": "1717171717171", "metageneration": "2",
                        "size": "2048", "timeCreated": "2024-05-31T16:08:37.171Z", "updated": "2024-06-01T00:00:00.000Z",
                        "contentType": "text/plain", "md5Hash": "XrY7u+Ae7tCTyyK7j1rNww==", "metadata": {"owner": "u1"},
                        "downloadTokens": "t1,t2", "somethingNew": 1},
           "requestResource": null, "time": "2026-01-15T12:00:00Z", "expect": "allow", "extra": "ignored"},
          {"name": "firebase user_id", "method": "create", "bucket": "b1", "path": "x", "auth": {"user_id": "u9"},
           "resource": null, "requestResource": {"size": 10}, "time": "2026-01-15T12:00:00Z",
           "expect": "DENY"}
        ]}
        """

    @Test func convertsWireMetadataLikeLiveRequests() throws {
        let cases = try RulesTestFile.parse(Array(Self.caseFile.utf8))
        #expect(cases.count == 2)
        let c = cases[0]
        #expect(c.name == "owner reads")
        #expect(c.expectAllow)
        #expect(c.request.method == .get)
        #expect(c.request.bucket == "b1")
        #expect(c.request.auth?.uid == "u1")
        #expect(c.request.auth?.claims["admin"] == .bool(true))
        #expect(c.request.time == Timestamp(rfc3339: "2026-01-15T12:00:00Z"))
        let r = try #require(c.request.resource)
        #expect(r.generation == 1717171717171)
        #expect(r.metageneration == 2)
        #expect(r.size == 2048)
        #expect(r.timeCreated == Timestamp(rfc3339: "2024-05-31T16:08:37.171Z"))
        #expect(r.customMetadata == ["owner": "u1"])
        #expect(r.downloadTokens == ["t1", "t2"])
        #expect(c.request.requestResource == nil)
        #expect(cases[1].request.auth?.uid == "u9")
        #expect(cases[1].request.requestResource?.size == 10)
        #expect(cases[1].request.requestResource?.contentType == "application/octet-stream")
        #expect(!cases[1].expectAllow)
        #expect(cases[1].request.requestResource?.name == "x")
        #expect(cases[1].request.requestResource?.bucket == "b1")
        #expect(cases[0].request.resource?.contentType == "text/plain")
        #expect(c.request.requestResource?.contentType == nil)
        // The converted values reach the rules as ints and timestamps.
        #expect(
            TS.eval(
                "resource.size == 2048 && resource.timeCreated < request.time && resource.metadata.owner == request.auth.uid"
                    + " && request.auth.token.email == 'a@b.c'", request: c.request) == "true")
    }

    @Test(arguments: [
        ("{}", "expected an object with a \"cases\" array"),
        (
            "{\"cases\": [{\"method\": \"read\", \"bucket\": \"b\", \"path\": \"x\", \"expect\": \"allow\"}]}",
            "\"method\" must be one of"
        ),
        (
            "{\"cases\": [{\"method\": \"get\", \"bucket\": \"b\", \"path\": \"x\", \"expect\": \"yes\"}]}",
            "\"expect\" must be"
        ),
        (
            "{\"cases\": [{\"method\": \"get\", \"bucket\": \"b\", \"path\": \"x\", \"expect\": \"allow\", \"time\": \"noon\"}]}",
            "\"time\" must be"
        ),
        (
            "{\"cases\": [{\"method\": \"get\", \"bucket\": \"b\", \"path\": \"x\", \"expect\": \"allow\", \"resource\": {\"size\": \"big\"}}]}",
            "\"size\" must be a decimal integer string"
        ),
        ("{\"cases\": [", "invalid JSON"),
    ])
    func rejectsMalformedCases(_ json: String, _ fragment: String) {
        do {
            _ = try RulesTestFile.parse(Array(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect("\(error)".contains(fragment), "\(error)")
        }
    }

    @Test func runnerReportsFailuresOnePerLine() throws {
        let ruleset = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage { match /b/{bucket}/o/users/{uid}/{f} { allow read: if request.auth.uid == uid; } }
            """, fileName: "s.rules")
        var cases = try RulesTestFile.parse(Array(Self.caseFile.utf8))
        cases.append(RulesTestCase(name: "wrong expectation", request: cases[0].request, expectAllow: false))
        let plain = RulesTestRunner.run(ruleset, cases: cases, explain: false)
        #expect(plain.passed == 2)
        #expect(plain.failed == 1)
        #expect(plain.lines == ["FAIL wrong expectation: expected deny, got allow"])
        let explained = RulesTestRunner.run(ruleset, cases: cases, explain: true)
        #expect(explained.lines.count == 1)
        #expect(
            explained.lines[0].hasPrefix(
                "FAIL wrong expectation: expected deny, got allow — allowed: 'allow read: if request.auth.uid == uid' at s.rules:2:"
            ))
    }
}
