import HTTPServer
import PortcullisCore
import Service
import Testing

@testable import Gateway

/// A query-gated surface (the XML-style signed-URL path) answers only requests naming its key, and for those it
/// comes first; every other request is routed as if it did not exist.
@Suite struct GatedRoutingTests {
    struct Surface: APISurface {
        let name: String
        let template: String
        let methods: [HTTPMethod]
        let traits: SurfaceTraits
        var routes: [Route<RouteHandler>] {
            [Route(methods, RouteTemplate(static: template)) { _ in HTTPResponse(status: 200) }]
        }
    }

    static let router: GatewayRouter = {
        let plain = Surface(
            name: "plain", template: "/v0/b/{bucket}/o", methods: [.get],
            traits: SurfaceTraits(errorShape: PlainErrorShape(), prefixes: ["/v0"]))
        let gated = Surface(
            name: "gated", template: "/{bucket}/{object...}", methods: [.get, .put, .delete],
            traits: SurfaceTraits(
                errorShape: PlainErrorShape(), queryGate: ["X-Goog-Signature", "GoogleAccessId"],
                answersFormPosts: true))
        do { return try GatewayRouter(surfaces: [plain, gated]) } catch { preconditionFailure("\(error)") }
    }()

    static func label(_ decision: GatewayRouter.Decision) -> String {
        switch decision {
        case .route(let label, _, _, _): "route " + label
        case .methodNotAllowed(let label, _, let allow, _): "405 \(label) \(allow.joined(separator: ","))"
        case .notFound(let label, _): "404 " + label
        }
    }

    @Test(
        arguments: [
            ("GET", "/bucket/a/b.txt", nil, "404 unmatched"),
            ("GET", "/bucket/a/b.txt", "X-Goog-Signaturex=1", "404 unmatched"),
            ("GET", "/bucket/a/b.txt", "x-goog-signature=1", "404 unmatched"),
            ("GET", "/bucket/a/b.txt", "X-Goog-Date=1&X-Goog-Signature=ab", "route /{bucket}/{object}"),
            ("PUT", "/bucket/a", "GoogleAccessId=a&Signature=b", "route /{bucket}/{object}"),
            ("POST", "/bucket/a", "GoogleAccessId=a", "405 /{bucket}/{object} GET,HEAD,PUT,DELETE,OPTIONS"),
            ("GET", "/v0/b/bucket/o", nil, "route /v0/b/{bucket}/o"),
            ("DELETE", "/v0/b/bucket/o", nil, "405 /v0/b/{bucket}/o GET,HEAD,OPTIONS"),
            ("GET", "/v0/other", nil, "404 /v0/unmatched"),
            ("GET", "/bucket", "X-Goog-Signature=ab", "404 unmatched"),
        ] as [(String, String, String?, String)])
    func routes(method: String, path: String, query: String?, expected: String) {
        let decision = Self.router.decide(HTTPMethod(method), path: Substring(path), query: query.map { Substring($0) })
        #expect(Self.label(decision) == expected)
    }

    @Test(
        arguments: [
            (
                "POST", "/bucket/", "multipart/form-data; boundary=x",
                "405 /{bucket}/{object} GET,HEAD,PUT,DELETE,OPTIONS"
            ),
            (
                "POST", "/bucket/", "Multipart/Form-Data; boundary=x",
                "405 /{bucket}/{object} GET,HEAD,PUT,DELETE,OPTIONS"
            ),
            ("POST", "/bucket/", "multipart/related; boundary=x", "404 unmatched"),
            ("GET", "/bucket/", "multipart/form-data; boundary=x", "404 unmatched"),
            ("POST", "/bucket/a/b", "multipart/form-data; boundary=x", "404 unmatched"),
            ("POST", "/v0/b/bucket/o", "multipart/form-data; boundary=x", "405 /v0/b/{bucket}/o GET,HEAD,OPTIONS"),
        ] as [(String, String, String, String)])
    func formUploadsToABucketRootAreGated(method: String, path: String, contentType: String, expected: String) {
        let decision = Self.router.decide(
            HTTPMethod(method), path: Substring(path), query: nil, contentType: contentType)
        #expect(Self.label(decision) == expected)
    }

    @Test func preflightOfASignedURLReachesTheGatedSurface() {
        let decision = Self.router.options(path: "/bucket/a.txt", query: "X-Goog-Signature=ab")
        #expect(Self.label(decision) == "405 /{bucket}/{object} GET,HEAD,PUT,DELETE,OPTIONS")
        #expect(Self.label(Self.router.options(path: "/bucket/a.txt", query: nil)) == "404 unmatched")
    }

    @Test(
        arguments: [
            ("ci@demo.iam.portcullis", SignedURLAccountSpec.registered(email: "ci@demo.iam.portcullis")),
            ("/etc/keys/sa.json", .keyFile(path: "/etc/keys/sa.json")),
            (
                "ops@x.iam.gserviceaccount.com=/k/ops.pem",
                .publicKey(email: "ops@x.iam.gserviceaccount.com", path: "/k/ops.pem")
            ),
            ("hmac:GOOG1ABC=/k/hmac", .hmac(accessID: "GOOG1ABC", path: "/k/hmac")),
        ] as [(String, SignedURLAccountSpec)])
    func signedURLAccountForms(text: String, expected: SignedURLAccountSpec) {
        #expect(SignedURLAccountSpec.parse(text) == expected)
    }

    @Test(arguments: ["", "no-at-sign", "hmac:", "hmac:=x", "hmac:id=", "=x", "a@b="])
    func signedURLAccountRefusals(text: String) {
        #expect(SignedURLAccountSpec.parse(text) == nil)
    }
}
