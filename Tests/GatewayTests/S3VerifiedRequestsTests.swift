import HTTPServer
import PortcullisCore
import Testing

@testable import Gateway

/// The verified-request memo finds an entry only by the same method and target, and an entry covers a request
/// only when every other byte its verification read is the same.
@Suite struct S3VerifiedRequestsTests {
    static let target =
        "/b/k?X-Amz-Credential=AK%2F20261205%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261205T000000Z"
        + "&X-Amz-Expires=60&X-Amz-SignedHeaders=host%3Bx-amz-meta-a&X-Amz-Signature=ab&X-Amz-Algorithm=AWS4-HMAC-SHA256"

    static func request(
        method: HTTPMethod = .get, target: String = target, headers: [(String, String)] = [("Host", "h.example")]
    ) -> HTTPRequest {
        var h = HTTPHeaders()
        for (name, value) in headers { h.add(name, value) }
        return HTTPRequest(method: method, target: target, headers: h, body: BufferByteStream([]))
    }

    static func entry(for request: HTTPRequest, payloadHash: String = "UNSIGNED-PAYLOAD") throws
        -> S3VerifiedRequests.Entry
    {
        let query = try QueryParameters(parsing: request.query)
        let claim = try S3SigV4.queryClaim(query.pairs)
        return S3VerifiedRequests.Entry(
            query: query, claim: claim, signedValues: claim.signedHeaders.map { request.headers.values($0) },
            payloadHash: payloadHash, secret: Array("secret".utf8), signingKey: [7])
    }

    @Test func onlyTheSameMethodAndTargetFindTheEntry() throws {
        let memo = S3VerifiedRequests()
        let seen = Self.request()
        memo.remember(seen, try Self.entry(for: seen))
        #expect(memo.entry(for: Self.request())?.signingKey == [7])
        #expect(memo.entry(for: Self.request(method: .head)) == nil)
        #expect(memo.entry(for: Self.request(target: "/b/K" + Self.target.dropFirst(4))) == nil)
        #expect(memo.entry(for: Self.request(target: Self.target + "&x")) == nil)
    }

    @Test func everySignedHeaderValueAndThePayloadHashMustBeTheSame() throws {
        let signed = [("Host", "h.example"), ("x-amz-meta-a", "1")]
        let entry = try Self.entry(for: Self.request(headers: signed))
        #expect(entry.covers(Self.request(headers: signed).headers, payloadHash: "UNSIGNED-PAYLOAD"))
        // A header the signature did not cover may change.
        #expect(
            entry.covers(
                Self.request(headers: signed + [("Range", "bytes=0-1")]).headers, payloadHash: "UNSIGNED-PAYLOAD"))
        #expect(!entry.covers(Self.request(headers: signed).headers, payloadHash: String(repeating: "0", count: 64)))
        for changed in [
            [("Host", "h.example "), ("x-amz-meta-a", "1")], [("Host", "H.example"), ("x-amz-meta-a", "1")],
            [("Host", "h.example")], [("Host", "h.example"), ("x-amz-meta-a", "1"), ("x-amz-meta-a", "2")],
            [("Host", "h.example"), ("x-amz-meta-a", "1,2")],
        ] {
            #expect(!entry.covers(Self.request(headers: changed).headers, payloadHash: "UNSIGNED-PAYLOAD"))
        }
    }

    @Test func overlongTargetsAreNotKept() throws {
        let memo = S3VerifiedRequests()
        let long = Self.request(
            target: Self.target + "&pad=" + String(repeating: "a", count: S3VerifiedRequests.maxTargetBytes))
        memo.remember(long, try Self.entry(for: long))
        #expect(memo.entry(for: long) == nil)
    }

    @Test func aFullMemoStartsOver() throws {
        let memo = S3VerifiedRequests(capacity: 2)
        let requests = ["/1", "/2", "/3"].map { Self.request(target: $0 + Self.target.dropFirst(4)) }
        for request in requests.prefix(2) { memo.remember(request, try Self.entry(for: request)) }
        #expect(memo.entry(for: requests[0]) != nil && memo.entry(for: requests[1]) != nil)
        memo.remember(requests[2], try Self.entry(for: requests[2]))
        #expect(memo.entry(for: requests[0]) == nil && memo.entry(for: requests[1]) == nil)
        #expect(memo.entry(for: requests[2]) != nil)
    }
}
