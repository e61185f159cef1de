import HTTPServer
import PortcullisCore
import Rules
public import Service

/// `POST /admin/v1/rules/explain` (admin only): how the rules the server runs decide one hypothetical request
/// — allow or deny, and which `match` and `allow` condition decided (or why none did). The console's rules
/// playground is its browser front-end; it is an API of its own, served whether or not the console is.
///
/// Body (JSON): `method` (`get|list|create|update|delete`), `bucket`, `path` (the object name; for `list` the
/// folder without its trailing `/`), and optionally `auth` (token claims, or null for an anonymous caller),
/// `resource` and `requestResource` (v0 metadata, as in `portcullis rules test` cases), `time` (RFC 3339;
/// default now), `delimiter`; for `list`, `prefix` asks about a live listing of that prefix, judged exactly as
/// one is (`ListScope`: the folder of the prefix, else the folder it names), instead of `path`. Answer: `{"decision":"allow"|"deny","allowed":bool,"explanation":"…"}`.
/// The service decides who may ask (admins); a malformed body is a 400 for anyone, since it reveals nothing
/// but what the caller sent.
public struct RulesExplainSurface: APISurface {
    public static let path = "/admin/v1/rules/explain"

    let service: StorageService
    public let traits = SurfaceTraits(
        errorShape: PlainErrorShape(),
        corsRequestHeaders: ["Authorization", "Content-Type", "X-Request-Id", "traceparent"],
        corsExposedHeaders: ["Content-Type", "Content-Length", "X-Request-Id"])

    public init(service: StorageService) {
        self.service = service
    }

    public var routes: [Route<RouteHandler>] {
        [Route([.post], RouteTemplate(static: Self.path)) { [self] in await explain($0) }]
    }

    func explain(_ matched: MatchedRequest) async -> HTTPResponse {
        let record = matched.record
        do {
            let caller = Caller(principal: matched.principal)
            let body = try await matched.request.collectDocument(limit: service.configuration.maxJSONBodyBytes)
            let (rulesRequest, prefix) = try RulesExplainRequest.decode(body)
            record.bucket = rulesRequest.bucket
            record.objectName = prefix ?? rulesRequest.path
            let decision =
                if let prefix {
                    try service.explainList(
                        bucket: rulesRequest.bucket, prefix: prefix, delimiter: rulesRequest.delimiter,
                        auth: rulesRequest.auth, time: rulesRequest.time, caller: caller)
                } else {
                    try service.explain(rulesRequest, caller: caller)
                }
            return Self.render(decision)
        } catch {
            return traits.errorShape.response(for: ServiceError(any: error), requestID: record.requestID)
        }
    }

    static func render(_ decision: RulesDecision) -> HTTPResponse {
        var out = Array(#"{"decision":"#.utf8)
        JSONValue.encodeString(decision.allowed ? "allow" : "deny", into: &out)
        out.append(contentsOf: #","allowed":"#.utf8)
        out.append(contentsOf: (decision.allowed ? "true" : "false").utf8)
        out.append(contentsOf: #","explanation":"#.utf8)
        JSONValue.encodeString(decision.explanation ?? "", into: &out)
        out.append(UInt8(ascii: "}"))
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: 200, headers: headers, body: .bytes(out))
    }
}
