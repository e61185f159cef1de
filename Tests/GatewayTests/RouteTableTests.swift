import HTTPServer
import PortcullisCore
import Service
import Testing

@testable import Gateway

/// The route table and the router compiled from it: templates, specificity, 405 and OPTIONS, captures as raw
/// bytes, and the start-up errors for tables that cannot be compiled.
@Suite struct RouteTableTests {
    typealias Table = CompiledRoutes<String>

    static func table(_ routes: [(methods: [HTTPMethod], template: String)]) throws -> Table {
        try CompiledRoutes(routes.map { Route($0.methods, try RouteTemplate($0.template), $0.template) })
    }

    /// The name of the route that serves `method` on `path`, its captures, or what refused it.
    static func resolve(_ table: Table, _ method: HTTPMethod, _ path: String) -> String {
        switch table.resolve(method, path: path[...]) {
        case .matched(let route, let match): "\(route.handler) \(match.captures.map(String.init))"
        case .methodNotAllowed(let allow): "405 " + allow.joined(separator: ",")
        case .notFound: "404"
        }
    }

    @Test func templatesParseAndLabel() throws {
        let template = try RouteTemplate("/v0/b/{bucket}/o/{object...}")
        #expect(template.label == "/v0/b/{bucket}/o/{object}")
        #expect(template.captureNames == ["bucket", "object"])
        #expect(try RouteTemplate("/console/").label == "/console/")
        for bad in ["v0/b", "/a/{x...}/b", "/a/{x}/{x}", "/a//b", "/a/{}", "/a/{x", "/a/x}", "/a/{x-y}"] {
            #expect(throws: RouteTableError.self, "\(bad)") { try RouteTemplate(bad) }
        }
    }

    @Test func theMostSpecificRouteServingTheMethodWins() throws {
        let t = try Self.table([
            ([.get, .patch, .delete], "/s/b/{bucket}/o/{object...}"),
            ([.post], "/s/b/{bucket}/o/{object}/compose"),
            ([.post], "/s/b/{bucket}/o/{object}/copyTo/b/{db}/o/{do}"),
            ([.get], "/s/b/{bucket}/o"),
        ])
        #expect(Self.resolve(t, .post, "/s/b/B/o/a/compose") == #"/s/b/{bucket}/o/{object}/compose ["B", "a"]"#)
        // GET takes the raw-slash name whole: the compose route does not serve GET.
        #expect(Self.resolve(t, .get, "/s/b/B/o/a/compose") == #"/s/b/{bucket}/o/{object...} ["B", "a/compose"]"#)
        #expect(Self.resolve(t, .head, "/s/b/B/o/x") == #"/s/b/{bucket}/o/{object...} ["B", "x"]"#)
        #expect(
            Self.resolve(t, .post, "/s/b/B/o/a%2Fb/copyTo/b/D/o/c")
                == #"/s/b/{bucket}/o/{object}/copyTo/b/{db}/o/{do} ["B", "a%2Fb", "D", "c"]"#)
        // A path only the rest route matches, with a method it does not serve: 405 with its Allow.
        #expect(Self.resolve(t, .post, "/s/b/B/o/a/b/c") == "405 GET,HEAD,PATCH,DELETE,OPTIONS")
        #expect(Self.resolve(t, .put, "/s/b/B/o") == "405 GET,HEAD,OPTIONS")
        #expect(Self.resolve(t, .get, "/s/b/B") == "404")
        #expect(Self.resolve(t, .get, "/s/b/B/o/") == #"/s/b/{bucket}/o/{object...} ["B", ""]"#)
        #expect(Self.resolve(t, .get, "s/b/B/o") == "404")
    }

    @Test func segmentsAreSplitOnTheSlashByte() throws {
        let t = try Self.table([([.get], "/a/{x}/o"), ([.get], "/a/{x}/p/{rest...}")])
        // A `/` followed by a combining mark is one Character but two path segments.
        #expect(Self.resolve(t, .get, "/a/q/\u{301}o") == "404")
        #expect(Self.resolve(t, .get, "/a/caf\u{E9}/o") == "/a/{x}/o \(["caf\u{E9}"])")
        #expect(Self.resolve(t, .get, "/a/x/p/\u{301}/y") == "/a/{x}/p/{rest...} \(["x", "\u{301}/y"])")
        // Literals compare by bytes: a canonically equivalent spelling is another path.
        let literal = try Self.table([([.get], "/caf\u{E9}")])
        #expect(Self.resolve(literal, .get, "/cafe\u{301}") == "404")
    }

    @Test func tablesThatCannotBeCompiledAreRefused() throws {
        #expect(throws: RouteTableError.overlap("/a/{x}", "/a/{y}", method: "GET")) {
            try Self.table([([.get], "/a/{x}"), ([.get, .post], "/a/{y}")])
        }
        // HEAD is served with GET: a GET route and a HEAD route on the same paths overlap.
        #expect(throws: RouteTableError.self) { try Self.table([([.get], "/a"), ([.head], "/a")]) }
        // Same shape, disjoint methods: one path, two routes.
        let split = try Self.table([([.get], "/a/{x}"), ([.post], "/a/{y}")])
        #expect(Self.resolve(split, .post, "/a/1") == #"/a/{y} ["1"]"#)
    }

    @Test func surfacesClaimingOneprefixAreRefused() throws {
        struct Prefixed: APISurface {
            let prefix: String
            var traits: SurfaceTraits { SurfaceTraits(errorShape: PlainErrorShape(), prefixes: [prefix]) }
            var routes: [Route<RouteHandler>] { [] }
        }
        #expect(throws: RouteTableError.self) {
            try GatewayRouter(surfaces: [Prefixed(prefix: "/x"), Prefixed(prefix: "/x/y")])
        }
        let router = try GatewayRouter(surfaces: [Prefixed(prefix: "/x"), Prefixed(prefix: "/xy")])
        guard case .notFound(let label, let traits) = router.decide(.get, path: "/xy/z") else {
            Issue.record("an unmatched path under a prefix")
            return
        }
        #expect(label == "/xy/unmatched" && traits?.prefixes == ["/xy"])
        guard case .notFound("unmatched", nil) = router.decide(.get, path: "/elsewhere") else {
            Issue.record("a path under no prefix")
            return
        }
    }
}

/// What a new surface costs: this file alone — one type with its table, and one line to register it.
@Suite struct NewSurfaceTests {
    /// A surface of two routes, as a new API would start.
    struct PingSurface: APISurface {
        let traits = SurfaceTraits(
            errorShape: PlainErrorShape(), prefixes: ["/ping"], corsRequestHeaders: ["Content-Type"],
            corsExposedHeaders: ["X-Pong"], loggableQueryKeys: ["n"])
        var routes: [Route<RouteHandler>] {
            [
                Route([.get], RouteTemplate(static: "/ping")) { _ in HTTPResponse(status: 204) },
                Route([.put], RouteTemplate(static: "/ping/{name}")) { matched in
                    var response = HTTPResponse(status: 200, body: .bytes(Array(matched.match["name"]!.utf8)))
                    response.headers.add("X-Pong", "1")
                    return response
                },
            ]
        }
    }

    @Test func aSurfaceIsATableAndOneRegistration() async throws {
        let registry = MetricsRegistry()
        let captured = CapturedLines()
        let responder = try GatewayResponder(
            ops: OpsEndpoints(readiness: Readiness(), registry: registry), surfaces: [EchoAPI(), PingSurface()],
            authentication: PermissiveAuthentication(), metrics: HTTPMetrics(registry: registry),
            accessLog: AccessLog(format: .json, output: captured.append))
        func send(_ method: HTTPMethod, _ target: String, _ headers: HTTPHeaders = [:]) async -> HTTPResponse {
            let response = await responder.respond(to: HTTPRequest(method: method, target: target, headers: headers))
            response.onComplete?(
                ExchangeSummary(
                    status: response.status, bytesIn: 0, bytesOut: 0, completed: true, durationNanos: 1,
                    timeToFirstByteNanos: 1))
            return response
        }
        #expect(await send(.get, "/ping").status == 204)
        let put = await send(.put, "/ping/abc?n=1&secret=s", ["Origin": "http://app.example"])
        #expect(put.status == 200)
        guard case .bytes(let echoed) = put.body else {
            Issue.record("a body of bytes")
            return
        }
        #expect(echoed == Array("abc".utf8))
        #expect(put.headers["Access-Control-Expose-Headers"] == "X-Pong")
        #expect(await send(.post, "/ping").headers["Allow"] == "GET, HEAD, OPTIONS")
        #expect(await send(.get, "/ping/x/y").status == 404)
        let preflight = await send(
            .options, "/ping/abc",
            ["Origin": "http://app.example", "Access-Control-Request-Method": "PUT"])
        #expect(preflight.status == 204)
        #expect(preflight.headers["Access-Control-Allow-Headers"] == "Content-Type")
        let lines = captured.joined
        #expect(lines.contains(#""route":"/ping/{name}""#))
        #expect(lines.contains("n=1&secret=REDACTED"))
    }
}
