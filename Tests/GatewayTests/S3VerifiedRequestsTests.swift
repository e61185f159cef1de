import Testing

@testable import Gateway

/// The verified-request memo's key holds every byte a presigned verification reads, and nothing else can
/// collide with it.
@Suite struct S3VerifiedRequestsTests {
    static let secret = Array("secret-one".utf8)

    static func request(
        method: String = "GET", path: Substring = "/b/k", query: Substring? = "X-Amz-Signature=ab&X-Amz-Date=d",
        headers: [String: [String]] = ["host": ["h.example"]]
    ) -> S3SigV4.Request {
        S3SigV4.Request(method: method, rawPath: path, query: query, header: { headers[$0] ?? [] })
    }

    static func key(
        _ request: S3SigV4.Request, signed: [String] = ["host"], payload: String = "UNSIGNED-PAYLOAD",
        secret: [UInt8] = secret
    ) -> S3VerifiedRequests.Key? {
        S3VerifiedRequests.key(request, signedHeaders: signed, payloadHash: payload, secret: secret)
    }

    @Test func theSameRequestHasTheSameKey() throws {
        #expect(try #require(Self.key(Self.request())) == Self.key(Self.request()))
    }

    @Test func everyFieldTheVerificationReadsChangesTheKey() throws {
        let base = try #require(Self.key(Self.request()))
        #expect(Self.key(Self.request(method: "PUT")) != base)
        #expect(Self.key(Self.request(path: "/b/K")) != base)
        #expect(Self.key(Self.request(query: "X-Amz-Signature=ac&X-Amz-Date=d")) != base)
        #expect(Self.key(Self.request(query: nil)) != base)
        #expect(Self.key(Self.request(headers: ["host": ["h.example "]])) != base)
        #expect(Self.key(Self.request(), signed: ["host", "x-amz-date"]) != base)
        #expect(Self.key(Self.request(), payload: String(repeating: "0", count: 64)) != base)
        #expect(Self.key(Self.request(), secret: Array("secret-two".utf8)) != base)
    }

    @Test func fieldBoundariesCannotBeMovedToCollide() throws {
        // The same bytes cut differently between fields or values never give the same key.
        #expect(
            Self.key(Self.request(path: "/b/k?", query: "a=b")) != Self.key(Self.request(path: "/b/k", query: "?a=b")))
        #expect(
            Self.key(Self.request(headers: ["host": ["a,b"]])) != Self.key(Self.request(headers: ["host": ["a", "b"]])))
    }

    @Test func overlongRequestsAreNotKept() {
        let long = Substring(String(repeating: "a", count: S3VerifiedRequests.maxKeyBytes))
        #expect(Self.key(Self.request(path: long)) == nil)
    }

    @Test func aFullMemoStartsOver() throws {
        let memo = S3VerifiedRequests(capacity: 2)
        let keys = try ["/1", "/2", "/3"].map { try #require(Self.key(Self.request(path: $0))) }
        memo.remember(keys[0], signingKey: [1])
        memo.remember(keys[1], signingKey: [2])
        #expect(memo.signingKey(keys[0]) == [1] && memo.signingKey(keys[1]) == [2])
        memo.remember(keys[2], signingKey: [3])
        #expect(memo.signingKey(keys[0]) == nil && memo.signingKey(keys[1]) == nil)
        #expect(memo.signingKey(keys[2]) == [3])
    }
}
