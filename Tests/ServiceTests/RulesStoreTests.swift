import Foundation
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Service

/// A stand-in compiler: `allow` grants everything, `deny` nothing, anything else fails at 1:1.
struct FakeRules: RulesEngine {
    let allow: Bool
    func evaluate(_ request: RulesRequest) -> RulesDecision { RulesDecision(allowed: allow) }
    func explain(_ request: RulesRequest) -> RulesDecision { RulesDecision(allowed: allow, explanation: "fake") }

    static let compiler: RulesStore.Compiler = { source, fileName in
        switch source {
        case "allow": .success(FakeRules(allow: true))
        case "deny": .success(FakeRules(allow: false))
        default: .failure(RulesLoadFailure(messages: ["\(fileName):1:1: unexpected input"]))
        }
    }
}

/// A service over an empty embedded bucket `b`, judged by `store`.
func serviceWith(_ store: RulesStore, registry: MetricsRegistry = MetricsRegistry()) throws -> StorageService {
    let dir = NSTemporaryDirectory() + "service-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return StorageService(
        configuration: ServiceConfiguration(),
        backends: ["b": try EmbeddedBackend.open(directory: dir, bucket: "b")],
        sealer: CapabilitySealer(keys: [SigningKey(id: "k", secret: Array("secret".utf8))]),
        rules: store, metrics: registry, logger: .disabled)
}

@Suite struct RulesStoreTests {
    func allowed(
        _ service: StorageService, _ method: RulesMethod, _ path: String, principal: Principal? = nil,
        requestResource: ObjectMetadata? = nil
    ) -> Bool {
        do {
            try service.authorize(
                method, ("b", path), principal: principal, resource: nil,
                requestResource: requestResource, RequestContext.recorded().0)
            return true
        } catch {
            #expect(error.kind == .forbidden)
            return false
        }
    }

    @Test func noRulesDeniesEverythingAndCountsIt() throws {
        let registry = MetricsRegistry()
        let service = try serviceWith(RulesStore(compile: FakeRules.compiler), registry: registry)
        #expect(!allowed(service, .get, "x"))
        #expect(registry.render().contains(#"portcullis_rules_decisions_total{method="get",decision="deny"} 1"#))
    }

    @Test func adminBypassesAndIsNotCounted() throws {
        let registry = MetricsRegistry()
        let service = try serviceWith(RulesStore(compile: FakeRules.compiler), registry: registry)
        let (context, record) = RequestContext.recorded()
        try service.authorize(.delete, ("b", "x"), principal: .admin, resource: nil, context)
        #expect(record.decision == .admin)
        #expect(registry.render().contains(#"portcullis_rules_decisions_total{method="delete",decision="allow"} 0"#))
        #expect(registry.render().contains(#"portcullis_rules_decisions_total{method="delete",decision="deny"} 0"#))
    }

    @Test func badReloadKeepsTheOldRules() throws {
        let registry = MetricsRegistry()
        let store = RulesStore(compile: FakeRules.compiler)
        let service = try serviceWith(store, registry: registry)
        #expect((try? store.load(source: "allow", fileName: "s.rules").get()) != nil)
        #expect(allowed(service, .create, "x"))
        guard case .failure(let failure) = store.load(source: "garbage", fileName: "s.rules") else {
            Issue.record("garbage compiled")
            return
        }
        #expect(failure.messages == ["s.rules:1:1: unexpected input"])
        #expect(allowed(service, .create, "x"))
        _ = store.load(source: "deny", fileName: "s.rules")
        #expect(!allowed(service, .create, "x"))
        let text = registry.render()
        #expect(text.contains(#"portcullis_rules_decisions_total{method="create",decision="allow"} 2"#))
        #expect(text.contains(#"portcullis_rules_decisions_total{method="create",decision="deny"} 1"#))
    }

    /// The store with the real Rules compiler, judging the Rules module's own request type.
    @Test func realRulesDecideAndBadReloadKeepsThem() throws {
        let store = RulesStore(logger: .disabled)
        let service = try serviceWith(store)
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
        #expect(allowed(service, .get, "users/alice/x", principal: alice))
        #expect(!allowed(service, .get, "users/bob/x", principal: alice))
        var small = ObjectMetadata(
            bucket: "b", name: "users/alice/x", generation: 1, metageneration: 1, size: 5,
            timeCreated: .now(), updated: .now())
        #expect(allowed(service, .create, "users/alice/x", requestResource: small))
        small.size = 50
        #expect(!allowed(service, .create, "users/alice/x", requestResource: small))

        guard
            case .failure(let failure) = store.load(
                source: "rules_version = '2';\nservice firebase.storage {\n  match",
                fileName: "s.rules")
        else {
            Issue.record("a broken file compiled")
            return
        }
        #expect(failure.messages.first?.hasPrefix("s.rules:3:") == true)
        #expect(allowed(service, .get, "users/alice/x", principal: alice))
    }

    /// Decisions memoised under one ruleset are gone once another is loaded (SIGHUP): a caller whose token is
    /// cached, asking the same thing, gets the new rules' answer.
    @Test func reloadingRulesDropsMemoisedDecisions() throws {
        let store = RulesStore(logger: .disabled)
        let service = try serviceWith(store)
        func rules(_ condition: String) -> String {
            "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o/{p=**} {\n"
                + "    allow read: if \(condition);\n  }\n}\n"
        }
        let alice = Principal(
            uid: "alice", claims: ["sub": .string("alice")],
            credentialDigest: CredentialDigest(a: 1, b: 2, c: 3, d: 4))
        #expect((try? store.load(source: rules("request.auth.uid == 'alice'"), fileName: "s.rules").get()) != nil)
        #expect(allowed(service, .get, "x", principal: alice))
        #expect(allowed(service, .get, "x", principal: alice))
        #expect((try? store.load(source: rules("request.auth.uid == 'bob'"), fileName: "s.rules").get()) != nil)
        #expect(!allowed(service, .get, "x", principal: alice))
        #expect((try? store.load(source: rules("request.auth.uid == 'alice'"), fileName: "s.rules").get()) != nil)
        #expect(allowed(service, .get, "x", principal: alice))
    }
}
