import Crypto
import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Testing

@testable import Gateway
@testable import Service

/// Capabilities grant exactly what they say, for as long as they say (issue: signed URLs reveal no download
/// tokens; upload URLs carry nothing readable and no token).
@Suite struct V0CapabilityTests {
    /// A signed URL for `name` (GET) issued by an allow-all instance, as a target path.
    func signedRead(_ h: V0Harness, _ name: String) async throws -> String {
        let r = try await h.send(
            "POST", V0Harness.objectPath(name) + "?signedUrl", body: Array(#"{"method":"GET"}"#.utf8))
        let url = try #require(r.json?["url"]?.stringValue)
        return String(url.dropFirst("http://gateway.test".count))
    }

    @Test func aSignedURLNeverYieldsADownloadToken() async throws {
        let h = try V0Harness()
        let meta = try await h.put("s/doc.txt", Array("signed!".utf8))
        let token = try #require(meta["downloadTokens"]?.stringValue)
        let locked = h.sibling(rules: DenyAllRules())
        let media = try await signedRead(h, "s/doc.txt")
        let metadataTarget = media.replacingOccurrences(of: "alt=media&", with: "")

        // The metadata read the signature grants shows no token …
        let m = try await h.send("GET", metadataTarget, api: locked)
        #expect(m.status == 200)
        #expect(m.json?["name"] == .string("s/doc.txt"))
        #expect(m.json?["downloadTokens"] == nil)
        #expect(!m.text.contains(token))
        // … nor does the media read's headers, and alt=downloadUrl is refused under the signature.
        let bytes = try await h.send("GET", media, api: locked)
        #expect(bytes.status == 200)
        #expect(!bytes.headers.fields.contains { $0.value.contains(token) })
        let url = try await h.send("GET", metadataTarget + "&alt=downloadUrl", api: locked)
        #expect(url.status == 403)
        #expect(!url.text.contains(token))
    }

    @Test func aSignedURLDoesNotMintTheFirstToken() async throws {
        let h = try V0Harness()
        // An object without any download token (v0 uploads always get one; the service writes one without).
        let object = try StorageService.objectPath(V0Harness.bucket, "bare.txt")
        _ = try await h.service.upload(
            UploadRequest(
                object: object, attributes: ObjectAttributes(contentType: "text/plain"),
                mintDownloadToken: false),
            body: BufferByteStream(Array("bare".utf8)), caller: Caller(principal: .admin),
            AccessRecord(requestID: "u").serviceContext)
        let target = try await signedRead(h, "bare.txt").replacingOccurrences(of: "alt=media&", with: "")
        let locked = h.sibling(rules: DenyAllRules())
        let m = try await h.send("GET", target, api: locked)
        #expect(m.status == 200)
        #expect(m.json?["metageneration"] == .string("1"), "a signed read must not write a token")
        #expect(m.json?["downloadTokens"] == nil)
        // An ordinary read still mints one.
        let ordinary = try await h.send("GET", V0Harness.objectPath("bare.txt"))
        #expect(ordinary.json?["downloadTokens"]?.stringValue?.isEmpty == false)
    }

    @Test func uploadURLsAreOpaqueAndCarryNoToken() async throws {
        let h = try V0Harness()
        let uploader = Principal(
            uid: "carol",
            claims: [
                "sub": .string("carol"), "email": .string("carol@example.com"),
                "phone_number": .string("+15550100"),
            ])
        let start = try await h.send(
            "POST", "/v0/b/default-bucket/o?name=up%2Fc.bin",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", "4"), ("Content-Type", "application/json"),
            ],
            body: Array(#"{"contentType":"x/secret-type","metadata":{"note":"private-note"}}"#.utf8),
            principal: uploader)
        #expect(start.status == 200)
        let url = try #require(start["X-Goog-Upload-URL"])
        let uploadID = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "upload_id" }?.value)
        // Nothing of the uploader or the attributes is readable in the URL, in any decoding.
        var revealed = url
        for part in uploadID.split(separator: ".") {
            if let bytes = Base64URL.decode(part) { revealed += String(decoding: bytes, as: UTF8.self) }
        }
        for secret in ["carol", "example.com", "15550100", "secret-type", "private-note"] {
            #expect(!revealed.contains(secret), "\(secret) is readable in the upload URL")
        }
        // Another instance (same key) finishes it; the object gets a download token nobody saw in the URL.
        let other = h.sibling()
        let target = String(url.dropFirst("http://gateway.test".count))
        let done = try await h.send(
            "PUT", target,
            headers: [
                ("X-Goog-Upload-Command", "upload, finalize"),
                ("X-Goog-Upload-Offset", "0"),
            ],
            body: Array("abcd".utf8), api: other)
        #expect(done.status == 200)
        let token = try #require(done.json?["downloadTokens"]?.stringValue)
        #expect(!token.isEmpty && !url.contains(token))
        #expect(done.json?["contentType"] == .string("x/secret-type"))
        // The token works.
        #expect(
            try await h.send(
                "GET", V0Harness.objectPath("up/c.bin") + "?alt=media&token=\(token)",
                api: h.sibling(rules: DenyAllRules())
            ).text == "abcd")
    }

    @Test func anEditedOrForeignUploadIDIsUnknown() async throws {
        let h = try V0Harness()
        let start = try await h.send(
            "POST", "/v0/b/default-bucket/o?name=e.bin",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ])
        let url = try #require(start["X-Goog-Upload-URL"])
        let target = String(url.dropFirst("http://gateway.test".count))
        var bytes = Array(target.utf8)
        let i = try #require(target.range(of: "upload_id=")).upperBound.utf16Offset(in: target) + 12
        bytes[i] = bytes[i] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let edited = try await h.send(
            "PUT", String(decoding: bytes, as: UTF8.self),
            headers: [("X-Goog-Upload-Command", "query")])
        #expect(edited.status == 404)
        let stranger = V0Harness.withOtherKey(h)
        #expect(
            try await h.send("PUT", target, headers: [("X-Goog-Upload-Command", "query")], api: stranger).status == 404)
    }
}

extension V0Harness {
    /// A surface over `h`'s storage with a different signing key.
    static func withOtherKey(_ h: V0Harness) -> V0API {
        V0API(
            service: StorageService(
                configuration: ServiceConfiguration(), backends: [bucket: h.backend],
                sealer: CapabilitySealer(keys: [SigningKey(id: "k1", secret: Array("other".utf8))]),
                rules: RulesStore(fixed: AllowAllRules()), metrics: MetricsRegistry(),
                logger: .disabled),
            configuration: V0Configuration(publicURL: "http://gateway.test"), logger: .disabled)
    }
}
