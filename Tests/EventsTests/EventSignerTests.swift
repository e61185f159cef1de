import Events
import PortcullisCore
import Testing

@Suite struct EventSignerTests {
    /// The vector was computed with Python's `hmac` (the documented receiver check): the signed message is
    /// `"<t>.<body>"`, the digest lower-case hex.
    @Test func signatureMatchesAnIndependentHMAC() {
        let signer = EventSigner(secret: Array("0123456789abcdef0123456789abcdef".utf8))
        let header = signer.signature(body: Array(#"{"name":"a"}"#.utf8), at: 1_700_000_000)
        #expect(header == "t=1700000000,v1=88032e30da166a8469e3906150c42a444206a8f0fab86b2fc7e57fbeed61de92")
    }

    @Test func signatureDependsOnTimeBodyAndSecret() {
        let signer = EventSigner(secret: Array(repeating: 7, count: 32))
        let body = Array("{}".utf8)
        let base = signer.signature(body: body, at: 1)
        #expect(base != signer.signature(body: body, at: 2))
        #expect(base != signer.signature(body: Array("{ }".utf8), at: 1))
        #expect(base != EventSigner(secret: Array(repeating: 8, count: 32)).signature(body: body, at: 1))
    }
}

@Suite struct CloudEventMessageTests {
    static let event = ChangeEvent(
        id: "e-1", kind: .metadataUpdated, bucket: "photos", name: "a/b c%\"é.png",
        time: Timestamp(nanosecondsSinceEpoch: 1_700_000_000_123_456_789),
        body: Array("{}".utf8))

    @Test func binaryModeAttributesAsCloudStorageEmitsThem() throws {
        let headers = CloudEventMessage.headers(for: Self.event, signer: nil, sentAt: .now())
        let byName = Dictionary(headers.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(byName["ce-specversion"] == "1.0")
        #expect(byName["ce-id"] == "e-1")
        #expect(byName["ce-type"] == "google.cloud.storage.object.v1.metadataUpdated")
        #expect(byName["ce-source"] == "//storage.googleapis.com/projects/_/buckets/photos")
        #expect(byName["ce-time"] == "2023-11-14T22:13:20.123Z")
        #expect(byName["Content-Type"] == "application/json")
        #expect(byName["Portcullis-Signature"] == nil)
        // Space, quote, percent and non-ASCII bytes are percent-encoded (CloudEvents HTTP binding §3.1.3.2).
        #expect(byName["ce-subject"] == "objects/a/b%20c%25%22%C3%A9.png")
    }

    @Test func signedWhenASignerIsGiven() throws {
        let signer = EventSigner(secret: Array(repeating: 1, count: 32))
        let headers = CloudEventMessage.headers(
            for: Self.event, signer: signer,
            sentAt: Timestamp(nanosecondsSinceEpoch: 5_000_000_000))
        let value = try #require(headers.first { $0.0 == "Portcullis-Signature" }?.1)
        #expect(value == signer.signature(body: Self.event.body, at: 5))
    }

    @Test(arguments: [
        (ChangeKind.finalized, "google.cloud.storage.object.v1.finalized"),
        (.metadataUpdated, "google.cloud.storage.object.v1.metadataUpdated"),
        (.deleted, "google.cloud.storage.object.v1.deleted"),
    ])
    func typesRoundTrip(_ kind: ChangeKind, _ type: String) {
        #expect(kind.cloudEventType == type)
        #expect(ChangeKind(cloudEventType: type) == kind)
    }
}

@Suite struct WebhookTests {
    @Test(arguments: [
        ("http://127.0.0.1:8080/hook", "http://127.0.0.1:8080/hook"),
        ("https://user:secret@hooks.example.com/x?token=abc", "https://hooks.example.com/x"),
        ("http://[::1]:9000", "http://[::1]:9000"),
        ("HTTPS://example.com", "https://example.com"),
    ])
    func accepted(_ url: String, _ label: String) throws {
        let webhook = try Webhook.parse(url).get()
        #expect(webhook.url == url)
        #expect(webhook.label == label)
    }

    @Test(arguments: [
        "ftp://example.com", "example.com/hook", "http://", "http:///path", "http://host:0/",
        "http://host:70000/", "http://host:x/", "http://exa mple.com/", "http://host/#frag",
        "http://[::1/", "https://user:secret@\u{301}hooks.example.com/x", "http://h\u{E9}.example.com/",
        "http://host/\u{301}x",
    ])
    func refused(_ url: String) {
        #expect(throws: WebhookURLError.self) { try Webhook.parse(url).get() }
    }
}
