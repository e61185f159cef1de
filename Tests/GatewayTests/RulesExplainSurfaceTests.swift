import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

/// `POST /admin/v1/rules/explain` over a real compiled ruleset: admin only, and its verdicts and explanations
/// are the ones the rules runtime gives live requests.
@Suite struct RulesExplainSurfaceTests {
    static let rules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /users/{uid}/{path=**} {
              allow read: if request.auth != null && request.auth.uid == uid;
              allow create: if request.auth.uid == uid && request.resource.size < 1024;
              allow delete: if resource.metadata.owner == request.auth.uid;
            }
          }
        }
        """

    let service: StorageService

    init() throws {
        let ruleset = try Ruleset.compile(Self.rules, fileName: "storage.rules")
        service = StorageService(
            configuration: ServiceConfiguration(), backends: [:],
            sealer: CapabilitySealer(keys: [SigningKey(id: "k1", secret: Array("secret-1".utf8))]),
            rules: RulesStore(fixed: ruleset), metrics: MetricsRegistry(), logger: .disabled)
    }

    func send(
        _ body: String, principal: Principal? = .admin, method: String = "POST",
        target: String = RulesExplainSurface.path
    ) async throws -> TestResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        let request = HTTPRequest(
            method: HTTPMethod(method), target: target, headers: headers,
            body: BufferByteStream(Array(body.utf8)))
        let registry = MetricsRegistry()
        let responder = try GatewayResponder(
            ops: OpsEndpoints(readiness: Readiness(), registry: registry),
            surfaces: [RulesExplainSurface(service: service), ConsoleSurface()],
            authentication: FixedAuthentication(principal: principal), metrics: HTTPMetrics(registry: registry),
            accessLog: .disabled)
        let response = await responder.respond(to: request, record: AccessRecord(requestID: "test"))
        return TestResponse(status: response.status, headers: response.headers, body: try await readBody(response.body))
    }

    @Test func anAllowNamesTheGrantingStatement() async throws {
        let response = try await send(
            #"{"method":"get","bucket":"b","path":"users/alice/a.txt","auth":{"sub":"alice"}}"#)
        #expect(response.status == 200)
        #expect(response["Cache-Control"] == "no-store")
        let json = try #require(response.json)
        #expect(json["decision"]?.stringValue == "allow")
        #expect(json["allowed"] == .bool(true))
        let explanation = try #require(json["explanation"]?.stringValue)
        #expect(explanation.hasPrefix("allowed: 'allow read: if request.auth != null && request.auth.uid == uid'"))
        #expect(explanation.contains("storage.rules:5:"))
        #expect(explanation.contains("/b/{bucket}/o/users/{uid}/{path=**}"))
    }

    @Test func aDenySaysWhyNothingGranted() async throws {
        let other = try await send(
            #"{"method":"get","bucket":"b","path":"users/alice/a.txt","auth":{"user_id":"bob"}}"#)
        #expect(other.json?["decision"]?.stringValue == "deny")
        #expect(other.json?["allowed"] == .bool(false))
        #expect(other.json?["explanation"]?.stringValue?.contains("evaluated to false") == true)
        let anonymous = try await send(#"{"method":"get","bucket":"b","path":"users/alice/a.txt","auth":null}"#)
        #expect(anonymous.json?["decision"]?.stringValue == "deny")
        let nowhere = try await send(#"{"method":"list","bucket":"b","path":"public"}"#)
        #expect(
            nowhere.json?["explanation"]?.stringValue?.hasPrefix("denied: no match block completely matches") == true)
    }

    @Test func resourceFieldsReachTheConditions() async throws {
        let small = try await send(
            #"{"method":"create","bucket":"b","path":"users/al/x","auth":{"sub":"al"},"requestResource":{"size":"10"}}"#
        )
        #expect(small.json?["decision"]?.stringValue == "allow")
        let large = try await send(
            #"{"method":"create","bucket":"b","path":"users/al/x","auth":{"sub":"al"},"requestResource":{"size":4096}}"#
        )
        #expect(large.json?["decision"]?.stringValue == "deny")
        let owned = try await send(
            #"{"method":"delete","bucket":"b","path":"users/al/x","auth":{"sub":"al"},"resource":{"metadata":{"owner":"al"}}}"#
        )
        #expect(owned.json?["decision"]?.stringValue == "allow")
        let notOwned = try await send(
            #"{"method":"delete","bucket":"b","path":"users/al/x","auth":{"sub":"al"},"resource":{"metadata":{"owner":"zed"}}}"#
        )
        #expect(notOwned.json?["decision"]?.stringValue == "deny")
    }

    @Test func onlyAdminsMayAsk() async throws {
        let body = #"{"method":"get","bucket":"b","path":"users/alice/a.txt","auth":{"sub":"alice"}}"#
        let user = try await send(body, principal: Principal(uid: "alice", claims: ["sub": .string("alice")]))
        #expect(user.status == 403)
        #expect(user.json?["error"]?["message"]?.stringValue == "Explaining the rules needs admin credentials.")
        #expect(try await send(body, principal: nil).status == 403)
    }

    @Test(arguments: [
        "", "[]", "not json", #"{"bucket":"b","path":"x"}"#, #"{"method":"read","bucket":"b","path":"x"}"#,
        #"{"method":"get","path":"x"}"#, #"{"method":"get","bucket":"","path":"x"}"#, #"{"method":"get","bucket":"b"}"#,
        #"{"method":"get","bucket":"b","path":"x","auth":"alice"}"#,
        #"{"method":"get","bucket":"b","path":"x","time":"noon"}"#,
        #"{"method":"get","bucket":"b","path":"x","resource":{"size":"big"}}"#,
    ])
    func malformedRequestsAre400(_ body: String) async throws {
        let response = try await send(body)
        #expect(response.status == 400, "\(body)")
        #expect(response.json?["error"]?["code"]?.int64Value == 400)
    }

    @Test func onlyPostIsServed() async throws {
        let get = try await send("", method: "GET")
        #expect(get.status == 405)
        #expect(get["Allow"] == "POST, OPTIONS")
        #expect(try await send("{}", target: RulesExplainSurface.path + "/more").status == 404)
    }

    @Test func theTimeIsTheCallersToChoose() async throws {
        let ruleset = try Ruleset.compile(
            """
            rules_version = '2';
            service firebase.storage { match /b/{bucket}/o { match /{f} {
              allow read: if request.time < timestamp.date(2030, 1, 1);
            } } }
            """, fileName: "t.rules")
        let service = StorageService(
            configuration: ServiceConfiguration(), backends: [:],
            sealer: CapabilitySealer(keys: [SigningKey(id: "k1", secret: Array("secret-1".utf8))]),
            rules: RulesStore(fixed: ruleset), metrics: MetricsRegistry(), logger: .disabled)
        func verdict(_ time: String) async throws -> String? {
            let (request, _) = try RulesExplainRequest.decode(
                Array(#"{"method":"get","bucket":"b","path":"f","time":"\#(time)"}"#.utf8))
            return try service.explain(request, caller: Caller(principal: .admin)).allowed ? "allow" : "deny"
        }
        #expect(try await verdict("2029-12-31T23:59:59Z") == "allow")
        #expect(try await verdict("2030-01-01T00:00:01Z") == "deny")
    }

    /// The shapes the server accepts are the patterns openapi/portcullis.yaml documents (schemathesis holds the
    /// server to them both ways).
    @Test func theAcceptedShapesAreTheDocumentedPatterns() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let spec = try String(contentsOf: root.appendingPathComponent("openapi/portcullis.yaml"), encoding: .utf8)
        func pattern(after marker: String) throws -> NSRegularExpression {
            let tail = try #require(spec.range(of: marker)).upperBound
            let line = try #require(spec[tail...].split(separator: "\n").first { $0.contains("pattern:") })
            let quoted = try #require(line.split(separator: "\"", omittingEmptySubsequences: false).dropFirst().first)
            return try NSRegularExpression(pattern: String(quoted).replacingOccurrences(of: "\\\\", with: "\\"))
        }
        func matches(_ regex: NSRegularExpression, _ text: String) -> Bool {
            regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        let time = try pattern(after: "    ExplainTime:")
        for sample in [
            "2026-12-01T14:10:15Z", "2026-12-01t14:10:15.123456789z", "1970-01-01T00:00:00+00:00",
            "2199-12-31T23:59:59-23:59", "1969-12-31T23:59:59Z", "2200-01-01T00:00:00Z", "2026-13-01T00:00:00Z",
            "2026-12-01T24:00:00Z", "2026-12-01T10:00:60Z", "2026-12-01T10:00:00", "2026-12-01T10:00:00.Z",
            "2026-12-01T10:00:00.1234567890Z", "2026-12-01 10:00:00Z", "2026-12-01T10:00:00+0100", "",
        ] {
            #expect(RulesExplainRequest.isTime(sample) == matches(time, sample), "\(sample)")
        }
        let integer = try pattern(after: "    ExplainInteger:")
        for sample in ["0", "-1", "123456789012345678", "1234567890123456789", "+5", "1.0", "", "-", "00012"] {
            #expect(RulesExplainRequest.isInteger(.string(sample)) == matches(integer, sample), "\(sample)")
        }
        #expect(RulesExplainRequest.isInteger(.int(999_999_999_999_999_999)))
        #expect(!RulesExplainRequest.isInteger(.int(1_000_000_000_000_000_000)))
        #expect(!RulesExplainRequest.isInteger(.double(1.5)))
    }
}
