import HTTPServer
import PortcullisCore
import Testing

@testable import Gateway

/// GatewayResponder called in-process (the socket-level tests are in OpsServerTests).
@Suite struct PipelineResponderTests {
    struct Harness {
        let registry = MetricsRegistry()
        let readiness: Readiness
        let captured = CapturedLines()
        let responder: GatewayResponder

        init(ready: Bool = true, backendReady: Bool = true) {
            readiness = Readiness(probeInterval: .zero) { backendReady }
            if ready { readiness.markServing() }
            responder = try! GatewayResponder(
                ops: OpsEndpoints(readiness: readiness, registry: registry), surfaces: [EchoAPI()],
                authentication: PermissiveAuthentication(), metrics: HTTPMetrics(registry: registry),
                accessLog: AccessLog(format: .json, output: captured.append))
        }

        func send(_ method: HTTPMethod, _ target: String, headers: HTTPHeaders = [:], completed: Bool = true)
            async -> HTTPResponse
        {
            let response = await responder.respond(to: HTTPRequest(method: method, target: target, headers: headers))
            response.onComplete?(
                ExchangeSummary(
                    status: response.status, bytesIn: 0, bytesOut: 5, completed: completed,
                    durationNanos: 1_000_000, timeToFirstByteNanos: nil))
            return response
        }
    }

    private func text(_ response: HTTPResponse) -> String {
        if case .bytes(let bytes) = response.body { return String(decoding: bytes, as: UTF8.self) }
        return ""
    }

    @Test func healthzIsAlways200() async {
        let harness = Harness(ready: false)
        let response = await harness.send(.get, "/healthz")
        #expect(response.status == 200)
        #expect(text(response) == #"{"status":"ok"}"#)
        #expect(
            harness.registry.render().contains(
                #"portcullis_http_requests_total{route="/healthz",method="GET",status="200"} 1"#))
        #expect(harness.captured.all.isEmpty)
    }

    @Test func readyzFollowsPhaseAndBackends() async {
        let starting = Harness(ready: false)
        #expect(await starting.send(.get, "/readyz").status == 503)
        starting.readiness.markServing()
        #expect(await starting.send(.get, "/readyz").status == 200)
        starting.readiness.markDraining()
        let draining = await starting.send(.get, "/readyz")
        #expect(draining.status == 503)
        #expect(text(draining).contains("draining"))
        #expect(await Harness(backendReady: false).send(.get, "/readyz").status == 503)
    }

    @Test func backendProbeIsCached() async {
        let calls = CapturedLines()
        let readiness = Readiness(probeInterval: .seconds(60)) {
            calls.append([1]); return true
        }
        readiness.markServing()
        for _ in 0..<5 { _ = await readiness.check() }
        #expect(calls.all.count == 1)
    }

    @Test func metricsEndpointServesExposition() async {
        let harness = Harness()
        _ = await harness.send(.get, "/v0/b/bkt/o/file")
        let response = await harness.send(.get, "/metrics")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(
            text(response).contains(
                #"portcullis_http_requests_total{route="/v0/b/{bucket}/o/{object}",method="GET",status="200"} 1"#))
    }

    @Test func unknownRouteIs404JSON() async throws {
        let harness = Harness()
        let response = await harness.send(.get, "/nope?token=secret")
        #expect(response.status == 404)
        let body = try #require(try JSONValue.parse(text(response)).objectValue)
        #expect(body["error"]?["code"]?.int64Value == 404)
        #expect(response.headers["X-Request-Id"] != nil)
        #expect(harness.captured.all.count == 1)
        #expect(harness.captured.joined.contains(#""route":"unmatched""#))
        #expect(!harness.captured.joined.contains("secret"))
    }

    @Test func wrongMethodOnOpsIs405WithAllow() async {
        let harness = Harness()
        for path in ["/healthz", "/readyz", "/metrics"] {
            let response = await harness.send(.post, path)
            #expect(response.status == 405)
            #expect(response.headers["Allow"] == "GET, HEAD")
        }
        #expect(await harness.send(.head, "/healthz").status == 200)
    }

    @Test func requestIDIsEchoedOrReplaced() async {
        let harness = Harness()
        let kept = await harness.send(.get, "/v0/b/bkt/o/file", headers: ["X-Request-Id": "abc-123_X.y"])
        #expect(kept.headers["X-Request-Id"] == "abc-123_X.y")
        #expect(harness.captured.joined.contains(#""request_id":"abc-123_X.y""#))
        for bad in ["has space", String(repeating: "a", count: 129), "semi;colon", ""] {
            let replaced = await harness.send(.get, "/v0/b/bkt/o/file", headers: ["X-Request-Id": bad])
            let id = replaced.headers["X-Request-Id"]
            #expect(id != nil && id != bad && RequestIdentity.sanitized(id) == id)
        }
        let health = await harness.send(.get, "/healthz", headers: ["X-Request-Id": "probe-1"])
        #expect(health.headers["X-Request-Id"] == "probe-1")
        #expect(RequestIdentity.generate() != RequestIdentity.generate())
        let generated = RequestIdentity.generate()
        #expect(generated.utf8.count == 20)
        #expect(generated.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }, "lower-case hex")
        // One process prefix, then a counter.
        let next = RequestIdentity.generate()
        #expect(generated.utf8.prefix(12).elementsEqual(next.utf8.prefix(12)))
        let (first, second) = (UInt64(generated.suffix(8), radix: 16), UInt64(next.suffix(8), radix: 16))
        #expect(first != nil && second != nil && second! > first!)
    }

    @Test func authenticationOutcomes() async throws {
        let harness = Harness()
        #expect(text(await harness.send(.get, "/v0/b/bkt/o/file")) == "anonymous")
        #expect(text(await harness.send(.get, "/v0/b/bkt/o/file", headers: ["Authorization": "Bearer secret"])) == "u1")
        let rejected = await harness.send(.get, "/v0/b/bkt/o/file", headers: ["Authorization": "Bearer nope"])
        #expect(rejected.status == 401)
        #expect(rejected.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
        #expect(rejected.headers["X-Request-Id"] != nil)
        #expect(harness.captured.joined.contains(#""status":401"#))
        #expect(harness.captured.joined.contains(#""uid":"u1""#))
    }

    @Test func clientGoneIsLoggedAs499() async {
        let harness = Harness()
        _ = await harness.send(.get, "/v0/b/bkt/o/file", completed: false)
        #expect(harness.captured.joined.contains(#""status":499"#))
        #expect(harness.registry.render().contains(#"status="499"} 1"#))
        #expect(harness.registry.render().contains("portcullis_http_inflight_requests 0"))
    }

    @Test func traceIDFromTraceparent() async {
        let harness = Harness()
        _ = await harness.send(
            .get, "/v0/b/bkt/o/file",
            headers: ["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"])
        #expect(harness.captured.joined.contains(#""trace_id":"4bf92f3577b34da6a3ce929d0e0e4736""#))
    }

}
