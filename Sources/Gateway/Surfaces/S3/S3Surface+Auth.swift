import Crypto
import HTTPServer
import PortcullisCore
import Service

/// Authentication of an S3 request: SigV4 from the `Authorization` header or a presigned query, checked against
/// the access key's secret (or, for the session key id, the JWT in `X-Amz-Security-Token`), then the body
/// wrapped so that what the signature declares about it is checked while it streams.
extension S3Surface {
    func authenticate(_ request: HTTPRequest, query: QueryParameters, verdict: S3BodyVerdict) async throws
        -> (Principal?, any ByteStream)
    {
        let headers = request.headers
        let claim: S3SigV4.Claim
        let payloadHash: String
        if query.contains("X-Amz-Signature") {
            claim = try S3SigV4.queryClaim(query.pairs)
            payloadHash = headers["x-amz-content-sha256"] ?? "UNSIGNED-PAYLOAD"
        } else if let authorization = headers["Authorization"] {
            claim = try S3SigV4.headerClaim(authorization, amzDate: headers["x-amz-date"])
            guard let declared = headers["x-amz-content-sha256"] else {
                throw S3Error(400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256")
            }
            payloadHash = declared
        } else if query.contains("AWSAccessKeyId") || query.contains("Signature") {
            // Never anonymous: a credential the gateway cannot check is refused, not ignored.
            throw S3Error(
                400, "InvalidRequest",
                "Signature Version 2 is not supported; sign with AWS4-HMAC-SHA256 (signature_version='s3v4').")
        } else {
            return (nil, request.body)  // Anonymous: the rules decide.
        }
        guard claim.credential.service.bytesEqual("s3") else {
            throw S3AuthFailure.malformed("The credential scope's service must be s3.")
        }
        try S3SigV4.checkTime(claim, now: clock().secondsSinceEpoch)
        let isSession = claim.credential.accessKeyID.bytesEqual(S3SessionToken.accessKeyID)
        let secret: [UInt8]
        var principal: Principal?
        if isSession {
            secret = Array(S3SessionToken.secret.utf8)
        } else {
            guard let key = keys.key(id: claim.credential.accessKeyID) else { throw S3AuthFailure.unknownKey }
            secret = key.secret
            principal = key.principal
        }
        let verifiable = S3SigV4.Request(
            method: request.method.rawValue, rawPath: request.path, query: request.query,
            header: { headers.values($0) })
        // A presigned request seen before with every verified byte the same is answered from the memo; header
        // signatures carry a fresh date each time, so they are not kept.
        let memoKey =
            claim.expires == nil
            ? nil
            : S3VerifiedRequests.key(
                verifiable, signedHeaders: claim.signedHeaders, payloadHash: payloadHash, secret: secret)
        let signingKey: [UInt8]
        if let memoKey, let known = verifiedRequests.signingKey(memoKey) {
            signingKey = known
        } else {
            signingKey = try S3SigV4.verify(
                verifiable, claim: claim, secret: secret, payloadHash: payloadHash, keys: signingKeys)
            if let memoKey { verifiedRequests.remember(memoKey, signingKey: signingKey) }
        }
        if isSession {
            guard let token = headers["x-amz-security-token"] ?? query["X-Amz-Security-Token"] else {
                throw S3AuthFailure.missingSessionToken
            }
            do {
                principal = try await sessions.authenticate(authorization: "Bearer " + token)
            } catch {
                throw S3AuthFailure.invalidSessionToken
            }
            guard principal != nil else { throw S3AuthFailure.invalidSessionToken }
        }
        return (principal, try body(request, payloadHash: payloadHash, claim: claim, signingKey: signingKey, verdict))
    }

    /// The body the operation reads: decoded from aws-chunked (signatures checked per chunk), or checked
    /// against the declared SHA-256, or as sent (`UNSIGNED-PAYLOAD`).
    private func body(
        _ request: HTTPRequest, payloadHash: String, claim: S3SigV4.Claim, signingKey: [UInt8],
        _ verdict: S3BodyVerdict
    ) throws -> any ByteStream {
        let headers = request.headers
        let decodedLength = headers["x-amz-decoded-content-length"].flatMap { Int64($0) }
        switch payloadHash {
        case "UNSIGNED-PAYLOAD": return request.body
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER":
            let signing = AWSChunkedStream.Signing(
                key: signingKey, amzDate: claim.amzDate, scope: claim.credential.scope, seed: claim.signature)
            return AWSChunkedStream(request.body, signing: signing, decodedLength: decodedLength, verdict: verdict)
        case "STREAMING-UNSIGNED-PAYLOAD-TRAILER":
            return AWSChunkedStream(request.body, signing: nil, decodedLength: decodedLength, verdict: verdict)
        default:
            guard payloadHash.utf8.count == 64, payloadHash.utf8.allSatisfy({ Self.isHexDigit($0) }) else {
                throw S3Error(
                    400, "InvalidArgument",
                    "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, a STREAMING- mode or a SHA-256 hex digest.")
            }
            return DigestCheckedStream(request.body, sha256: payloadHash, md5: nil, crc32c: nil, verdict: verdict)
        }
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
