import PortcullisCore
import Testing
@testable import Gateway

/// A stand-in compiler: `allow` grants everything, `deny` nothing, anything else fails at 1:1.
struct FakeRules: CompiledRules {
    let allow: Bool
    func decide(_ request: AccessRequest) -> AccessDecision { AccessDecision(allowed: allow, explanation: "fake") }

    static let compiler: RulesStore.Compiler = { source, fileName in
        switch source {
        case "allow": .success(FakeRules(allow: true))
        case "deny": .success(FakeRules(allow: false))
        default: .failure(RulesLoadFailure(messages: ["\(fileName):1:1: unexpected input"]))
        }
    }
}

@Suite struct PipelineRulesStoreTests {
    @Test func noRulesDeniesEverything() {
        let registry = MetricsRegistry()
        let authorizer = RulesAuthorizer(store: RulesStore(compile: FakeRules.compiler), registry: registry)
        let decision = authorizer.authorize(AccessRequest(method: .get, bucket: "b", path: "x", principal: nil))
        #expect(!decision.allowed)
        #expect(registry.render().contains(#"portcullis_rules_decisions_total{method="get",decision="deny"} 1"#))
    }

    @Test func badReloadKeepsTheOldRules() {
        let registry = MetricsRegistry()
        let store = RulesStore(compile: FakeRules.compiler)
        let authorizer = RulesAuthorizer(store: store, registry: registry)
        let request = AccessRequest(method: .create, bucket: "b", path: "x", principal: nil)
        #expect((try? store.load(source: "allow", fileName: "s.rules").get()) != nil)
        #expect(authorizer.authorize(request).allowed)
        guard case .failure(let failure) = store.load(source: "garbage", fileName: "s.rules") else {
            Issue.record("garbage compiled")
            return
        }
        #expect(failure.messages == ["s.rules:1:1: unexpected input"])
        #expect(authorizer.authorize(request).allowed)
        _ = store.load(source: "deny", fileName: "s.rules")
        #expect(!authorizer.authorize(request).allowed)
        let text = registry.render()
        #expect(text.contains(#"portcullis_rules_decisions_total{method="create",decision="allow"} 2"#))
        #expect(text.contains(#"portcullis_rules_decisions_total{method="create",decision="deny"} 1"#))
    }
}

/// The store with the real Rules compiler: AccessRequest → RulesRequest conversion and diagnostics.
@Suite struct PipelineRulesetStoreTests {
    @Test func realRulesDecideAndBadReloadKeepsThem() {
        let store = RulesStore(logger: .disabled)
        let authorizer = RulesAuthorizer(store: store)
        let source = """
            rules_version = '2';
            service firebase.storage {
              match /b/{bucket}/o {
                match /users/{uid}/{file=**} {
                  allow read: if request.auth != null && request.auth.uid == uid;
                  allow create: if request.resource.size < 10;
                }
              }
            }
            """
        #expect((try? store.load(source: source, fileName: "s.rules").get()) != nil)
        let alice = Principal(uid: "alice", claims: ["sub": .string("alice")])
        #expect(authorizer.authorize(AccessRequest(method: .get, bucket: "b", path: "users/alice/x", principal: alice)).allowed)
        #expect(!authorizer.authorize(AccessRequest(method: .get, bucket: "b", path: "users/bob/x", principal: alice)).allowed)
        var small = ObjectMetadata(bucket: "b", name: "users/alice/x", generation: 1, metageneration: 1, size: 5,
                                   timeCreated: .now(), updated: .now())
        #expect(authorizer.authorize(AccessRequest(method: .create, bucket: "b", path: "users/alice/x", principal: nil,
                                                   requestResource: small)).allowed)
        small.size = 50
        #expect(!authorizer.authorize(AccessRequest(method: .create, bucket: "b", path: "users/alice/x", principal: nil,
                                                    requestResource: small)).allowed)

        guard case .failure(let failure) = store.load(source: "rules_version = '2';\nservice firebase.storage {\n  match",
                                                      fileName: "s.rules") else {
            Issue.record("a broken file compiled")
            return
        }
        #expect(failure.messages.first?.hasPrefix("s.rules:3:") == true)
        #expect(authorizer.authorize(AccessRequest(method: .get, bucket: "b", path: "users/alice/x", principal: alice)).allowed)
    }
}
