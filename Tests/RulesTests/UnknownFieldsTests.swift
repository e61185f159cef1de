import PortcullisCore
import Testing

@testable import Rules

/// Decisions made before an upload's bytes arrive (`RulesRequest.unknownFields`): a condition that hinges on
/// the unknown size or hashes is undetermined, one that does not is decided — false absorbs `&&`, true absorbs
/// `||`, and nothing built from an unknown value (lists, maps, calls, functions) is mistaken for a known one.
@Suite struct UnknownFieldsTests {
    static func decision(
        _ condition: String, unknown: UnknownFields, uid: String? = "alice", size: Int64 = 5,
        functions: String = ""
    ) throws -> RulesDecision {
        let source = """
            rules_version = '2';
            \(functions)
            service firebase.storage {
              match /b/{bucket}/o/{path=**} {
                allow create: if \(condition);
              }
            }
            """
        let ruleset = try Ruleset.compile(source, fileName: "unknown.rules")
        var request = TS.request(.create, uid: uid, requestResource: TS.meta(size: size))
        request.unknownFields = unknown
        return ruleset.evaluate(request)
    }

    enum Outcome: Equatable { case allowed, denied, undetermined }

    static func outcome(
        _ condition: String, unknown: UnknownFields = [.size, .md5Hash, .crc32c],
        uid: String? = "alice", functions: String = ""
    ) throws -> Outcome {
        let d = try decision(condition, unknown: unknown, uid: uid, functions: functions)
        return d.allowed ? .allowed : (d.determined ? .denied : .undetermined)
    }

    @Test(arguments: [
        ("request.resource.size < 1024", Outcome.undetermined),
        ("request.resource.size < 1024 && request.auth.uid == 'bob'", .denied),
        ("request.auth.uid == 'bob' && request.resource.size < 1024", .denied),
        ("request.resource.size < 1024 || request.auth.uid == 'alice'", .allowed),
        ("request.auth.uid == 'alice' || request.resource.size < 1024", .allowed),
        ("request.resource.size < 1024 || request.auth.uid == 'bob'", .undetermined),
        ("!(request.resource.size < 1024)", .undetermined),
        ("-request.resource.size < 0", .undetermined),
        ("request.resource.size < 1024 ? true : false", .undetermined),
        ("request.resource.md5Hash == request.resource.contentType", .undetermined),
        ("request.resource.md5Hash == request.resource.metadata.md5", .denied),  // no such key: an error either way
        ("request.resource.crc32c.size() == 8", .undetermined),
        ("[request.resource.size] == [5]", .undetermined),
        ("{'s': request.resource.size} == {'s': 5}", .undetermined),
        ("request.resource.size in [1, 2, 5]", .undetermined),
        ("string(request.resource.size) == '5'", .undetermined),
        ("request.resource.size is int", .undetermined),
        ("request.resource == resource", .denied),  // resource is null: unequal whatever the proposal holds
        ("request.resource == {'size': 5}", .undetermined),
        ("request.resource.keys().hasAll(['size'])", .undetermined),
        ("request.resource.contentType == 'text/plain'", .allowed),
        ("request.resource.contentType == 'image/png'", .denied),
        ("request.resource.contentType == 'image/png' && request.resource.size < 10", .denied),
        ("request.resource.size.nope() && false", .denied),
        ("request.resource.size.nope() || request.auth.uid == 'alice'", .allowed),
    ])
    func threeValued(_ condition: String, _ expected: Outcome) throws {
        #expect(try Self.outcome(condition) == expected, "\(condition)")
    }

    @Test func functionsPropagateTheUnknown() throws {
        let small = "function small(s) { return s < 1024; }"
        #expect(try Self.outcome("small(request.resource.size)", functions: small) == .undetermined)
        #expect(try Self.outcome("small(request.resource.size) && false", functions: small) == .denied)
    }

    @Test func knownFieldsAreDecidedAsAlways() throws {
        // Only the listed fields are unknown: with the size known, a size rule is decided.
        #expect(try Self.outcome("request.resource.size < 1024", unknown: [.md5Hash]) == .allowed)
        #expect(try Self.outcome("request.resource.size > 1024", unknown: [.md5Hash]) == .denied)
        #expect(try Self.outcome("request.resource.md5Hash == 'x'", unknown: [.size]) == .denied)
        // With nothing unknown every decision is determined.
        let d = try Self.decision("request.resource.size > 1024", unknown: [])
        #expect(!d.allowed && d.determined && d.deniedForCertain)
    }

    @Test func theStoredResourceIsNeverUnknown() throws {
        // `resource` (what is stored) stays known; only the proposal's fields can be unknown.
        #expect(try Self.outcome("resource == null") == .allowed)
        #expect(try Self.outcome("resource != null && request.resource.size < 10") == .denied)
    }

    @Test func explainNamesTheUndecidedStatement() throws {
        let ruleset = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o/{path=**} {
                allow create: if request.resource.size < 1024;
              }
            }
            """, fileName: "unknown.rules")
        var request = TS.request(.create, uid: "alice", requestResource: TS.meta())
        request.unknownFields = [.size]
        let explained = ruleset.explain(request)
        #expect(!explained.allowed && !explained.determined)
        #expect(explained.explanation?.contains("depends on a field not known yet") == true)
    }
}
