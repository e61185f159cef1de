public import Auth
import HTTPServer
public import PortcullisCore
import Service

/// `POST /oauth2/v4/token`: the OAuth 2.0 token endpoint of Portcullis-issued service accounts — the `token_uri`
/// of their key files, so google-auth (google-cloud-storage, firebase-admin, gcsfs) obtains access tokens here
/// exactly as it does from Google.
///
/// Body `application/x-www-form-urlencoded`: `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and
/// `assertion=<JWT>` (RFC 7523). Success: `{"access_token","expires_in","token_type":"Bearer"}`; a refused
/// assertion: 400 `{"error":"invalid_grant","error_description":…}` in Google's words. The assertion's `aud`
/// must be this endpoint's URL (under `--public-url` when set, else on the request's `Host`, http or https) or
/// Google's token endpoint, which google-auth always names.
/// No `Authorization` header is needed (the assertion is the credential).
public struct OAuthTokenSurface: APISurface {
    public static let path = "/oauth2/v4/token"
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// A form body carrying one assertion is far smaller.
    static let maxBodyBytes = 64 * 1024

    let authority: ServiceAccountAuthority
    /// `--public-url`, without a trailing slash.
    let publicURL: String?
    let failures: AuthFailureCounters
    public let traits = SurfaceTraits(
        errorShape: OAuthErrorShape(), prefixes: ["/oauth2"], notFoundMessage: "Not Found.",
        corsRequestHeaders: ["Content-Type", "X-Request-Id", "traceparent"],
        corsExposedHeaders: ["Content-Type", "X-Request-Id"])

    public init(authority: ServiceAccountAuthority, publicURL: String?, metrics: MetricsRegistry) {
        self.authority = authority
        self.publicURL = publicURL
        failures = AuthFailureCounters(metrics)
    }

    public var routes: [Route<RouteHandler>] {
        [Route([.post], RouteTemplate(static: Self.path)) { [self] in await token($0) }]
    }

    /// Google's token endpoints: google-auth names `https://oauth2.googleapis.com/token` as the `aud` of every
    /// assertion whatever the key file's `token_uri`, and Google accepts all three. A Portcullis account's key is
    /// registered nowhere else, so an assertion naming Google's endpoint can only be redeemed here.
    static let googleAudiences = [
        "https://oauth2.googleapis.com/token", "https://www.googleapis.com/oauth2/v4/token",
        "https://accounts.google.com/o/oauth2/token",
    ]

    /// The URLs an assertion's `aud` may name for this request: this endpoint's (under `--public-url`, else on
    /// the request's `Host`) and Google's.
    func audiences(host: String?) -> [String] {
        if let publicURL { return [publicURL + Self.path] + Self.googleAudiences }
        guard let host, !host.isEmpty else { return Self.googleAudiences }
        return ["http://\(host)\(Self.path)", "https://\(host)\(Self.path)"] + Self.googleAudiences
    }

    func token(_ matched: MatchedRequest) async -> HTTPResponse {
        let record = matched.record
        do {
            let body = try await matched.request.collectDocument(limit: Self.maxBodyBytes)
            let form = try QueryParameters(
                parsing: Substring(String(decoding: body, as: UTF8.self)), singleValued: ["grant_type", "assertion"])
            guard let grant = form["grant_type"] else {
                return refusal(400, "invalid_request", "Missing required parameter: grant_type", record)
            }
            guard grant.bytesEqual(Self.grantType) else {
                return refusal(400, "unsupported_grant_type", "Invalid grant_type: \(grant)", record)
            }
            guard let assertion = form["assertion"], !assertion.isEmpty else {
                return refusal(400, "invalid_request", "Missing required parameter: assertion", record)
            }
            let issued = try authority.exchange(
                assertion: Array(assertion.utf8), audiences: audiences(host: matched.request.headers["Host"]))
            var out = Array(#"{"access_token":"#.utf8)
            JSONValue.encodeString(issued.accessToken, into: &out)
            out.append(contentsOf: #","expires_in":"#.utf8)
            DecimalText.append(issued.expiresIn, to: &out)
            out.append(contentsOf: #","token_type":"Bearer"}"#.utf8)
            var headers = HTTPHeaders()
            headers.add("Content-Type", "application/json; charset=utf-8")
            headers.add("Cache-Control", "no-store")
            headers.add("Pragma", "no-cache")
            return HTTPResponse(status: 200, headers: headers, body: .bytes(out))
        } catch let error as OAuthGrantError {
            failures.count(error.reason)
            return refusal(400, error.error, error.errorDescription, record)
        } catch {
            return traits.errorShape.response(for: ServiceError(any: error), requestID: record.requestID)
        }
    }

    private func refusal(_ status: Int, _ error: String, _ description: String, _ record: AccessRecord)
        -> HTTPResponse
    {
        OAuthErrorShape.response(status: status, error: error, description: description, requestID: record.requestID) {
            body in
            var headers = HTTPHeaders()
            headers.add("Content-Type", "application/json; charset=utf-8")
            headers.add("X-Content-Type-Options", "nosniff")
            headers.add("X-Request-Id", record.requestID)
            return HTTPResponse(status: status, headers: headers, body: .bytes(body))
        }
    }
}
