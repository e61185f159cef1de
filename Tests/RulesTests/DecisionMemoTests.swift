import Foundation
import PortcullisCore
import Testing

@testable import Rules

/// The decision memo: what is memoised (decisions reading only method, bucket, path and caller), what never is
/// (anything that read `request.time`, `resource`, `request.resource`, the whole `request`, or called `debug()`),
/// and that memoised answers equal evaluated ones on every fixture.
@Suite struct DecisionMemoTests {
    static func digest(_ seed: Int) -> CredentialDigest {
        CredentialDigest(a: UInt64(seed), b: 0x5eed, c: 0, d: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// A principal as `Authenticator` hands it out: with the digest of its (here: made-up) token.
    static func request(
        _ method: RulesMethod = .get, _ path: String = "a/b.txt", uid: String? = "alice",
        digest seed: Int = 1, time: Timestamp = TS.now, resource: ObjectMetadata? = nil,
        requestResource: ObjectMetadata? = nil
    ) -> RulesRequest {
        let auth = uid.map { Principal(uid: $0, claims: ["sub": .string($0)], credentialDigest: digest(seed)) }
        return RulesRequest(
            method: method, bucket: TS.bucket, path: path, auth: auth, time: time, resource: resource,
            requestResource: requestResource)
    }

    static func ruleset(_ body: String, functions: String = "") throws -> Ruleset {
        try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o {
                \(functions)
                \(body)
              }
            }
            """, fileName: "memo.rules")
    }

    static func allows(_ ruleset: Ruleset) -> [Bool] {
        func walk(_ block: MatchBlock) -> [Bool] { block.allows.map(\.isVolatile) + block.children.flatMap(walk) }
        return ruleset.program.blocks.flatMap(walk)
    }

    // MARK: Static analysis

    @Test(arguments: [
        ("request.auth.uid == 'alice'", false),
        ("request.auth != null && request.auth.token.role == 'x'", false),
        ("request.path[3] == 'a' && request.method == 'get'", false),
        ("request.auth.token.get('groups', []).size() > 0", false),
        ("p.size() > 1 && 'x' in request.params", false),
        ("request.time < timestamp.date(2030, 1, 1)", true),
        ("resource == null", true),
        ("resource.size < 10", true),
        ("request.resource.size < 10", true),
        ("request.resource == null", true),
        ("request.keys().size() > 0", true),
        ("request.get('time', 0) != 0", true),
        ("request['auth'] != null", true),
        ("debug(true)", true),
        ("readsTime()", true),
        ("keyedOnly()", false),
        ("true || resource.size < 10", true),
    ])
    func volatilityOfConditions(_ condition: String, _ volatile: Bool) throws {
        let functions = """
            function readsTime() { return request.time > timestamp.value(0); }
            function keyedOnly() { return request.auth.uid.size() > 0; }
            """
        let rules = try Self.ruleset("match /{p=**} { allow read: if \(condition); }", functions: functions)
        #expect(Self.allows(rules) == [volatile])
    }

    @Test func anUnconditionalAllowIsNotVolatile() throws {
        #expect(Self.allows(try Self.ruleset("match /{p=**} { allow read; }")) == [false])
    }

    // MARK: What is memoised

    @Test func keyedDecisionsAreMemoisedAndAnsweredFromTheMemo() throws {
        let rules = try Self.ruleset("match /{p=**} { allow read: if request.auth.uid == 'alice'; }")
        #expect(rules.evaluate(Self.request()).allowed)
        #expect(rules.memo.count == 1)
        #expect(rules.evaluate(Self.request()).allowed)
        #expect(rules.memo.count == 1)
        #expect(!rules.evaluate(Self.request(uid: "bob", digest: 2)).allowed)
        #expect(!rules.evaluate(Self.request(uid: nil)).allowed)
        #expect(!rules.evaluate(Self.request(.delete)).allowed)
        #expect(rules.memo.count == 4)
        // The memo answers by key: a planted answer for a key is what evaluate returns (so hits are real hits).
        rules.memo.insert(DecisionKey(Self.request(uid: "bob", digest: 2))!, allowed: true)
        #expect(rules.evaluate(Self.request(uid: "bob", digest: 2)).allowed)
    }

    @Test func principalsWithoutACredentialDigestAreNeverMemoised() throws {
        let rules = try Self.ruleset("match /{p=**} { allow read: if request.auth.uid == 'alice'; }")
        let handMade = RulesRequest(
            method: .get, bucket: TS.bucket, path: "a",
            auth: Principal(uid: "alice", claims: [:]))
        #expect(rules.evaluate(handMade).allowed)
        #expect(rules.memo.count == 0)
    }

    @Test func pathsAreKeyedByBytesNotByCanonicalEquivalence() throws {
        let rules = try Self.ruleset("match /{name} { allow read: if name == 'caf\u{E9}'; }")
        #expect(rules.evaluate(Self.request(.get, "caf\u{E9}")).allowed)
        #expect(!rules.evaluate(Self.request(.get, "cafe\u{301}")).allowed)
        #expect(rules.evaluate(Self.request(.get, "caf\u{E9}")).allowed)
        #expect(rules.memo.count == 2)
    }

    // MARK: What never is

    @Test func decisionsReadingRequestTimeAreNeverMemoised() throws {
        let rules = try Self.ruleset("match /{p=**} { allow read: if request.time < timestamp.date(2030, 1, 1); }")
        let before = Timestamp(rfc3339: "2029-12-31T23:59:59Z")!, after = Timestamp(rfc3339: "2030-01-01T00:00:01Z")!
        for _ in 0..<3 {
            #expect(rules.evaluate(Self.request(time: before)).allowed)
            #expect(!rules.evaluate(Self.request(time: after)).allowed)
        }
        #expect(rules.memo.count == 0)
    }

    @Test func decisionsReadingResourceAreNeverMemoised() throws {
        let rules = try Self.ruleset(
            """
            match /{p=**} {
              allow get: if resource.size < 100;
              allow create: if request.resource.size < 100;
              allow update: if resource == null;
            }
            """)
        for _ in 0..<3 {
            #expect(rules.evaluate(Self.request(resource: TS.meta(size: 10))).allowed)
            #expect(!rules.evaluate(Self.request(resource: TS.meta(size: 1000))).allowed)
            #expect(rules.evaluate(Self.request(.create, requestResource: TS.meta(size: 10))).allowed)
            #expect(!rules.evaluate(Self.request(.create, requestResource: TS.meta(size: 1000))).allowed)
            #expect(rules.evaluate(Self.request(.update, resource: nil)).allowed)
            #expect(!rules.evaluate(Self.request(.update, resource: TS.meta())).allowed)
        }
        #expect(rules.memo.count == 0)
    }

    @Test func aVolatileAllowReachedAfterKeyedOnesStillPreventsMemoising() throws {
        // The keyed allow is false for bob, so the resource-reading one decides: nothing may be memoised.
        let rules = try Self.ruleset(
            """
            match /{p=**} {
              allow read: if request.auth.uid == 'alice';
              allow read: if resource.metadata.get('public', 'no') == 'yes';
            }
            """)
        let open = TS.meta(custom: ["public": "yes"]), closed = TS.meta()
        #expect(rules.evaluate(Self.request(uid: "bob", digest: 2, resource: open)).allowed)
        #expect(!rules.evaluate(Self.request(uid: "bob", digest: 2, resource: closed)).allowed)
        #expect(rules.memo.count == 0)
        // Alice is granted by the first allow before the volatile one is reached: memoised.
        #expect(rules.evaluate(Self.request(resource: closed)).allowed)
        #expect(rules.memo.count == 1)
    }

    @Test func debugIsCalledOnEveryRequest() throws {
        let seen = Collected()
        let rules = try Self.ruleset("match /{p=**} { allow read: if debug(request.auth.uid) == 'alice'; }")
            .with(debugHandler: { seen.add($0) })
        for _ in 0..<3 { #expect(rules.evaluate(Self.request()).allowed) }
        #expect(seen.all == ["'alice'", "'alice'", "'alice'"])
        #expect(rules.memo.count == 0)
    }

    // MARK: Bounds

    @Test func theMemoStaysWithinItsCapacity() throws {
        let memo = DecisionMemo(capacity: 128)
        #expect(memo.capacity == 128)
        for i in 0..<2000 {
            memo.insert(DecisionKey(Self.request(.get, "f\(i)"))!, allowed: i % 2 == 0)
        }
        #expect(memo.count <= 128)
        // The most recent insertions are still there, with their own answers.
        for i in 1990..<2000 {
            #expect(memo.lookup(DecisionKey(Self.request(.get, "f\(i)"))!) == (i % 2 == 0))
        }
    }

    @Test func aNewCompileStartsWithAnEmptyMemo() throws {
        let source = "rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read; } }"
        let first = try Ruleset.compile(source, fileName: "a.rules")
        #expect(first.evaluate(Self.request()).allowed)
        #expect(first.memo.count == 1)
        let second = try Ruleset.compile(source, fileName: "a.rules")
        #expect(second.memo.count == 0)
        #expect(first.with(debugHandler: { _ in }).memo === first.memo)
    }

    // MARK: Equivalence on every fixture

    /// Claims rendered with sorted keys: equal claims give equal digests, so cases with the same caller share
    /// memo keys, as tokens of one user would.
    static func canonical(_ value: JSONValue) -> String {
        switch value {
        case .object(let o):
            return "{"
                + o.keys.sorted { $0.bytesLess(than: $1) }.map { "\($0.utf8.count):\($0)=" + canonical(o[$0]!) }
                .joined(separator: ",") + "}"
        case .array(let a): return "[" + a.map(canonical).joined(separator: ",") + "]"
        default: return value.encoded()
        }
    }

    static func withDigests(_ cases: [RulesTestCase]) -> [RulesTestCase] {
        var seeds: [ExactString: Int] = [:]
        return cases.map { c in
            var c = c
            if let auth = c.request.auth {
                let text = ExactString(auth.uid + "\u{0}" + canonical(.object(auth.claims)))
                let seed = seeds[text] ?? seeds.count + 1
                seeds[text] = seed
                c.request.auth = auth.with(credentialDigest: digest(seed))
            }
            return c
        }
    }

    static var fixtureDirectories: [String] {
        let root = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
        let conformance = root.appendingPathComponent("conformance")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: conformance.path)) ?? [])
            .filter { !$0.hasSuffix(".md") }.sorted()
        return names.map { conformance.appendingPathComponent($0).path } + [root.appendingPathComponent("bench").path]
    }

    @Test(arguments: fixtureDirectories)
    func memoisedDecisionsEqualEvaluatedOnes(_ directory: String) throws {
        let dir = URL(fileURLWithPath: directory)
        let source = try String(contentsOf: dir.appendingPathComponent("storage.rules"), encoding: .utf8)
        let rules = try Ruleset.compile(source, fileName: "storage.rules")
        let json = try Data(contentsOf: dir.appendingPathComponent("CASES.json"))
        let cases = Self.withDigests(try RulesTestFile.parse(Array(json)))
        // Three passes in order, then one in reverse: later passes meet whatever earlier cases memoised.
        for pass in 0..<4 {
            for c in pass == 3 ? cases.reversed() : cases {
                let decided = rules.evaluate(c.request).allowed
                #expect(decided == c.expectAllow, "\(c.name) (pass \(pass))")
                #expect(decided == rules.explain(c.request).allowed, "\(c.name) (pass \(pass))")
            }
        }
    }
}
