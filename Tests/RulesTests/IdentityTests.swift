import PortcullisCore
import Testing

@testable import Rules

/// Strings in rules compare as Java compares them: equal only when their code units are, ordered by UTF-16 code
/// units. Swift's `String ==`, `<` and hashing follow canonical equivalence instead, so each case below is an
/// expression that is true for Firebase and was false (or a decision that was wrong) under Swift semantics.
@Suite struct IdentityTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"
    /// U+212A KELVIN SIGN is canonically equivalent to the ASCII letter K.
    static let kelvinKim = "\u{212A}im"

    @Test(arguments: [
        // == / != / ordering on strings
        "'caf\u{E9}' != 'cafe\u{301}'", "!('caf\u{E9}' == 'cafe\u{301}')", "'\u{212A}' != 'K'",
        "'cafe\u{301}' < 'caf\u{E9}'", "'caf\u{E9}' > 'cafe\u{301}'", "!('caf\u{E9}' <= 'cafe\u{301}')",
        // `in` on lists, sets and maps
        "!('cafe\u{301}' in ['caf\u{E9}'])", "!('cafe\u{301}' in ['caf\u{E9}'].toSet())",
        "!('cafe\u{301}' in {'caf\u{E9}': 1})", "!('K' in {'\u{212A}': 1})",
        // map keys: literals, get() by key and by key path
        "{'caf\u{E9}': 1, 'cafe\u{301}': 2}.size() == 2", "{'caf\u{E9}': 1}.get('cafe\u{301}', 0) == 0",
        "{'caf\u{E9}': {'x': 1}}.get(['cafe\u{301}', 'x'], 0) == 0",
        // keys()/values() in Java order: by UTF-16 code unit ('e' 0x65 < 'é' 0xE9; surrogates below U+FFFD)
        "{'caf\u{E9}': 1, 'cafe\u{301}': 2}.keys() == ['cafe\u{301}', 'caf\u{E9}']",
        "{'caf\u{E9}': 1, 'cafe\u{301}': 2}.values() == [2, 1]",
        "{'\u{FFFD}': 1, '\u{10000}': 2}.keys() == ['\u{10000}', '\u{FFFD}']",
        // hasAny / hasAll / hasOnly / removeAll
        "!['caf\u{E9}'].hasAny(['cafe\u{301}'])", "!['caf\u{E9}'].hasAll(['cafe\u{301}'])",
        "!['cafe\u{301}'].hasOnly(['caf\u{E9}'])", "['caf\u{E9}'].removeAll(['cafe\u{301}']).size() == 1",
        // list, set and map equality; set building and set algebra
        "['caf\u{E9}'] != ['cafe\u{301}']", "['caf\u{E9}'].toSet() != ['cafe\u{301}'].toSet()",
        "{'a': 'caf\u{E9}'} != {'a': 'cafe\u{301}'}", "{'caf\u{E9}': 1} != {'cafe\u{301}': 1}",
        "['caf\u{E9}', 'cafe\u{301}'].toSet().size() == 2",
        "['caf\u{E9}'].toSet().intersection(['cafe\u{301}'].toSet()).size() == 0",
        "['caf\u{E9}'].toSet().difference(['cafe\u{301}'].toSet()).size() == 1",
        "['caf\u{E9}'].toSet().union(['cafe\u{301}'].toSet()).size() == 2",
        // diff()
        "{'caf\u{E9}': 1}.diff({'cafe\u{301}': 1}).affectedKeys().size() == 2",
        "{'caf\u{E9}': 1}.diff({'cafe\u{301}': 1}).addedKeys() == ['caf\u{E9}'].toSet()",
        // paths: split on the '/' code unit (a '/' followed by a combining mark still separates), compared exactly
        "path('a/\u{301}b').size() == 2", "path('caf\u{E9}') != path('cafe\u{301}')",
    ])
    func javaStringSemantics(_ expression: String) {
        #expect(TS.eval(expression) == "true", "\(expression)")
    }

    @Test func bindLooksUpItsNameExactly() {
        #expect(TS.eval("path('a/$(caf\u{E9})').bind({'caf\u{E9}': 'v'}) == path('a/v')") == "true")
        #expect(TS.eval("path('a/$(cafe\u{301})').bind({'caf\u{E9}': 'v'})") == "error")
    }

    @Test func tokenClaimsAreLookedUpExactly() {
        let request = TS.request(uid: "u1", claims: [Self.decomposed: .bool(true), "\u{212A}": .string("kelvin")])
        for expression in [
            "request.auth.token.get('caf\u{E9}', false) == false", "!('caf\u{E9}' in request.auth.token)",
            "request.auth.token.get('cafe\u{301}', false) == true", "!('K' in request.auth.token)",
            "request.auth.token.keys().hasAll(['cafe\u{301}', '\u{212A}', 'sub'])",
        ] {
            #expect(TS.eval(expression, request: request) == "true", "\(expression)")
        }
        #expect(TS.eval("request.auth.token['caf\u{E9}']", request: request) == "error")
        #expect(TS.eval("request.auth.token.K", request: request) == "error")
    }

    @Test func metadataKeysAreLookedUpExactly() {
        let stored = TS.meta(custom: [Self.decomposed: "x"])
        let request = TS.request(.update, uid: "u1", resource: stored, requestResource: stored)
        for expression in [
            "resource.metadata.get('caf\u{E9}', 'none') == 'none'", "!('caf\u{E9}' in resource.metadata)",
            "!request.resource.metadata.keys().hasOnly(['caf\u{E9}'])",
            "request.resource.metadata.keys().hasOnly(['cafe\u{301}'])",
        ] {
            #expect(TS.eval(expression, request: request) == "true", "\(expression)")
        }
        #expect(TS.eval("resource.metadata['caf\u{E9}']", request: request) == "error")
    }

    static let ownerRules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /users/{uid}/{file} { allow read, write: if request.auth.uid == uid; }
            match /caf\u{E9}/{file} { allow read; }
          }
        }
        """

    static func decide(_ method: RulesMethod, _ path: String, uid: String?) throws -> Bool {
        let ruleset = try Ruleset.compile(ownerRules, fileName: "owner.rules")
        return ruleset.evaluate(TS.request(method, path, uid: uid)).allowed
    }

    /// The attack: a user whose uid is the decomposed spelling reads and overwrites the composed owner's
    /// folder (and `"\u{212A}im"` the folder of `"Kim"`).
    @Test func ownerFolderNeedsTheOwnersExactUid() throws {
        #expect(try Self.decide(.get, "users/\(Self.composed)/a.txt", uid: Self.composed))
        #expect(try !Self.decide(.get, "users/\(Self.composed)/a.txt", uid: Self.decomposed))
        #expect(try !Self.decide(.update, "users/\(Self.composed)/a.txt", uid: Self.decomposed))
        #expect(try !Self.decide(.create, "users/\(Self.decomposed)/a.txt", uid: Self.composed))
        #expect(try Self.decide(.delete, "users/Kim/a.txt", uid: "Kim"))
        #expect(try !Self.decide(.delete, "users/Kim/a.txt", uid: Self.kelvinKim))
    }

    /// Literal segments of a `match` pattern match request segments by bytes.
    @Test func literalPathSegmentsMatchExactly() throws {
        #expect(try Self.decide(.get, "\(Self.composed)/x", uid: nil))
        #expect(try !Self.decide(.get, "\(Self.decomposed)/x", uid: nil))
    }
}
