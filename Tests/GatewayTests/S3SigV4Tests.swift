import PortcullisCore
import Testing

@testable import Gateway

/// The S3 surface's SigV4 verifier against AWS's published vectors: the SigV4 test suite (`get-vanilla`,
/// `get-vanilla-query-order-key-case`, service `service`), the S3 documentation's header-signed GET and
/// presigned URL examples, and its aws-chunked upload example (seed and per-chunk signatures). Each vector is
/// checked both ways: its signature verifies, and the same request with one byte changed does not.
@Suite struct S3SigV4Tests {
    static let suiteSecret = Array("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".utf8)
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    static func request(
        _ method: String, _ target: String, _ headers: [(String, String)]
    ) -> S3SigV4.Request {
        let path: Substring
        var query: Substring?
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = target[..<mark]
            query = target[target.utf8.index(after: mark)...]
        } else {
            path = Substring(target)
        }
        return S3SigV4.Request(
            method: method, rawPath: path, query: query,
            header: { name in headers.filter { $0.0.lowercased().bytesEqual(name) }.map(\.1) })
    }

    static func claim(_ authorization: String, _ date: String) throws -> S3SigV4.Claim {
        try S3SigV4.headerClaim(authorization, amzDate: date)
    }

    @Test func getVanilla() throws {
        let headers = [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")]
        let claim = try Self.claim(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=host;x-amz-date, "
                + "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31", "20150830T123600Z")
        let canonical = try S3SigV4.canonicalRequest(
            Self.request("GET", "/", headers), signedHeaders: claim.signedHeaders, payloadHash: Self.emptyHash)
        #expect(
            canonical
                == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
                + Self.emptyHash)
        _ = try S3SigV4.verify(
            Self.request("GET", "/", headers), claim: claim, secret: Self.suiteSecret, payloadHash: Self.emptyHash)
        #expect(throws: S3AuthFailure.mismatch) {
            _ = try S3SigV4.verify(
                Self.request("GET", "/x", headers), claim: claim, secret: Self.suiteSecret,
                payloadHash: Self.emptyHash)
        }
    }

    @Test func queryOrderAndCaseAreCanonicalized() throws {
        let headers = [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")]
        let claim = try Self.claim(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=host;x-amz-date, "
                + "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500", "20150830T123600Z")
        _ = try S3SigV4.verify(
            Self.request("GET", "/?Param2=value2&Param1=value1", headers), claim: claim, secret: Self.suiteSecret,
            payloadHash: Self.emptyHash)
        #expect(throws: S3AuthFailure.mismatch) {
            _ = try S3SigV4.verify(
                Self.request("GET", "/?Param2=value2&Param1=value2", headers), claim: claim,
                secret: Self.suiteSecret, payloadHash: Self.emptyHash)
        }
    }

    static let s3Secret = Array("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".utf8)

    /// S3 documentation, "Example: GET Object" (header signature, `Range`).
    @Test func s3GetObjectExample() throws {
        let headers = [
            ("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"),
            ("x-amz-content-sha256", Self.emptyHash), ("x-amz-date", "20130524T000000Z"),
        ]
        let claim = try Self.claim(
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41", "20130524T000000Z")
        _ = try S3SigV4.verify(
            Self.request("GET", "/test.txt", headers), claim: claim, secret: Self.s3Secret,
            payloadHash: Self.emptyHash)
        #expect(throws: S3AuthFailure.mismatch) {
            _ = try S3SigV4.verify(
                Self.request("GET", "/test.txt", headers), claim: claim,
                secret: Array("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ".utf8), payloadHash: Self.emptyHash)
        }
    }

    /// S3 documentation, "Example: Presigned URL" (GET, 86400 s, `UNSIGNED-PAYLOAD`).
    @Test func s3PresignedExample() throws {
        let target =
            "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
            + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        let pairs = try QueryParameters(parsing: target.split(separator: "?")[1]).pairs
        let claim = try S3SigV4.queryClaim(pairs)
        let request = Self.request("GET", target, [("Host", "examplebucket.s3.amazonaws.com")])
        _ = try S3SigV4.verify(request, claim: claim, secret: Self.s3Secret, payloadHash: "UNSIGNED-PAYLOAD")
        let signedAt = try #require(S3SigV4.seconds(amzDate: "20130524T000000Z"))
        try S3SigV4.checkTime(claim, now: signedAt + 86_400)
        #expect(throws: S3AuthFailure.expired) { try S3SigV4.checkTime(claim, now: signedAt + 86_401) }
    }

    @Test func headerSignaturesAllowFifteenMinutesOfSkew() throws {
        let claim = try Self.claim(
            "AWS4-HMAC-SHA256 Credential=K/20130524/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00",
            "20130524T000000Z")
        let signedAt = try #require(S3SigV4.seconds(amzDate: "20130524T000000Z"))
        try S3SigV4.checkTime(claim, now: signedAt + 900)
        try S3SigV4.checkTime(claim, now: signedAt - 900)
        #expect(throws: S3AuthFailure.skewed) { try S3SigV4.checkTime(claim, now: signedAt + 901) }
        #expect(throws: S3AuthFailure.skewed) { try S3SigV4.checkTime(claim, now: signedAt - 901) }
    }

    /// S3 documentation, "Example: PUT Object" with `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`: the seed signature, then
    /// the body (64 KiB and 1 KiB of `a`, then the final empty chunk) decoded with each chunk's signature checked.
    static let chunkSignatures = [
        "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
        "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
        "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
    ]

    static func chunkedExample() throws -> (AWSChunkedStream.Signing, S3SigV4.Request) {
        let headers = [
            ("Host", "s3.amazonaws.com"), ("x-amz-date", "20130524T000000Z"),
            ("x-amz-storage-class", "REDUCED_REDUNDANCY"), ("Content-Encoding", "aws-chunked"),
            ("Content-Length", "66824"), ("x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"),
            ("x-amz-decoded-content-length", "66560"),
        ]
        let claim = try Self.claim(
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
                + "x-amz-decoded-content-length;x-amz-storage-class,"
                + "Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9", "20130524T000000Z")
        let request = Self.request("PUT", "/examplebucket/chunkObject.txt", headers)
        let key = try S3SigV4.verify(
            request, claim: claim, secret: Self.s3Secret, payloadHash: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
        return (
            AWSChunkedStream.Signing(
                key: key, amzDate: claim.amzDate, scope: claim.credential.scope, seed: claim.signature), request
        )
    }

    static func chunkedBody(signatures: [String]) -> [UInt8] {
        var body: [UInt8] = []
        for (size, signature) in zip([65_536, 1024, 0], signatures) {
            body += Array("\(String(size, radix: 16));chunk-signature=\(signature)\r\n".utf8)
            body += [UInt8](repeating: UInt8(ascii: "a"), count: size)
            body += Array("\r\n".utf8)
        }
        return body
    }

    @Test func awsChunkedExampleDecodes() async throws {
        let (signing, _) = try Self.chunkedExample()
        let body = Self.chunkedBody(signatures: Self.chunkSignatures)
        #expect(body.count == 66_824)
        let stream = AWSChunkedStream(
            BufferByteStream(body), signing: signing, decodedLength: 66_560, verdict: S3BodyVerdict())
        let decoded = try await stream.collect(limit: 1 << 20)
        #expect(decoded == [UInt8](repeating: UInt8(ascii: "a"), count: 66_560))
    }

    @Test func aTamperedChunkFailsTheStream() async throws {
        let (signing, _) = try Self.chunkedExample()
        var body = Self.chunkedBody(signatures: Self.chunkSignatures)
        body[66_000] = UInt8(ascii: "b")  // inside the second chunk (65 536 + two header lines before it)
        let verdict = S3BodyVerdict()
        let stream = AWSChunkedStream(BufferByteStream(body), signing: signing, decodedLength: 66_560, verdict: verdict)
        await #expect(throws: (any Error).self) { _ = try await stream.collect(limit: 1 << 20) }
        #expect(verdict.recorded?.code == "SignatureDoesNotMatch")
    }

    @Test func aWrongFinalSignatureFailsTheStream() async throws {
        let (signing, _) = try Self.chunkedExample()
        var signatures = Self.chunkSignatures
        signatures[2] = String(repeating: "0", count: 64)
        let verdict = S3BodyVerdict()
        let stream = AWSChunkedStream(
            BufferByteStream(Self.chunkedBody(signatures: signatures)), signing: signing, decodedLength: 66_560,
            verdict: verdict)
        await #expect(throws: (any Error).self) { _ = try await stream.collect(limit: 1 << 20) }
        #expect(verdict.recorded?.code == "SignatureDoesNotMatch")
    }

    @Test func canonicalURIEncodesOnceWhateverTheClientEscaped() {
        #expect(S3SigV4.canonicalURI("/b/a%20b/c~d") == "/b/a%20b/c~d")
        #expect(S3SigV4.canonicalURI("/b/%61+b") == "/b/a%2Bb")
        #expect(S3SigV4.canonicalURI("/b/caf%C3%A9") == "/b/caf%C3%A9")
        #expect(S3SigV4.canonicalURI("/b/%zz") == nil)
    }

    @Test func signingKeysAreKeptPerSecretAndScope() throws {
        let keys = S3SigningKeys(capacity: 2)
        let day1 = try S3SigV4.Credential(parsing: "AKID/20261204/us-east-1/s3/aws4_request")
        let day2 = try S3SigV4.Credential(parsing: "AKID/20261205/us-east-1/s3/aws4_request")
        let secret = Array("first secret".utf8)
        #expect(keys.key(secret: secret, credential: day1) == S3SigV4.signingKey(secret: secret, credential: day1))
        #expect(keys.key(secret: secret, credential: day1) == S3SigV4.signingKey(secret: secret, credential: day1))
        #expect(keys.key(secret: secret, credential: day2) == S3SigV4.signingKey(secret: secret, credential: day2))
        // A reloaded key file with a new secret for the same id derives the new key, never the kept one.
        let rotated = Array("second secret".utf8)
        #expect(keys.key(secret: rotated, credential: day1) == S3SigV4.signingKey(secret: rotated, credential: day1))
        #expect(keys.key(secret: rotated, credential: day1) != S3SigV4.signingKey(secret: secret, credential: day1))
        // Past its capacity the cache starts over and still answers right.
        let other = try S3SigV4.Credential(parsing: "OTHER/20261204/eu-west-1/s3/aws4_request")
        #expect(keys.key(secret: secret, credential: other) == S3SigV4.signingKey(secret: secret, credential: other))
    }

    @Test func canonicalQuerySortsByteWiseAndDropsTheSignature() {
        #expect(S3SigV4.canonicalQuery(nil) == "")
        #expect(S3SigV4.canonicalQuery("b=2&a=1&X-Amz-Signature=ff&uploads") == "a=1&b=2&uploads=")
        #expect(S3SigV4.canonicalQuery("k=b&k=a&Z=1") == "Z=1&k=a&k=b")
        #expect(S3SigV4.canonicalQuery("p=a%20b%2Fc~&q=%zz") == nil)
        #expect(S3SigV4.canonicalQuery("p=a%20b%2Fc~") == "p=a%20b%2Fc~")
        #expect(S3SigV4.canonicalQuery("p=a+b") == "p=a%2Bb")
    }
}
