import Crypto
import HTTPServer
import PortcullisCore
import Service

/// Authentication of an S3 request: SigV4 from the `Authorization` header or a presigned query, checked against
/// the access key's secret (or, for the session key id, the JWT in `X-Amz-Security-Token`), then the body
/// wrapped so that what the signature declares about it is checked while it streams.
extension S3Surface {
    /// The request's parsed query, its principal (nil: anonymous, the rules decide) and its body as the
    /// signature vouches for it.
    func admit(_ request: HTTPRequest, verdict: S3BodyVerdict) async throws
        -> (QueryParameters, Principal?, any ByteStream)
    {
        if let admitted = try await admitVerified(request, verdict: verdict) { return admitted }
        let query = try QueryParameters(parsing: request.query)
        let (principal, body) = try await authenticate(request, query: query, verdict: verdict)
        return (query, principal, body)
    }

    /// A presigned request verified before, when everything its signature covered is unchanged (the memo's
    /// entry); nil sends it through the whole check. Expiry and skew are checked here as there.
    private func admitVerified(_ request: HTTPRequest, verdict: S3BodyVerdict) async throws
        -> (QueryParameters, Principal?, any ByteStream)?
    {
        let headers = request.headers
        guard request.query != nil, !headers.contains("Authorization"),
            let known = verifiedRequests.entry(for: request),
            known.covers(headers, payloadHash: headers["x-amz-content-sha256"] ?? "UNSIGNED-PAYLOAD")
        else { return nil }
        try S3SigV4.checkTime(known.claim, now: clock().secondsSinceEpoch)
        guard let (secret, keyPrincipal) = signer(of: known.claim), secret.elementsEqual(known.secret) else {
            return nil
        }
        let principal = try await principal(of: known.claim, keyPrincipal, request, known.query)
        let body = try body(
            request, payloadHash: known.payloadHash, claim: known.claim, signingKey: known.signingKey, verdict)
        return (known.query, principal, body)
    }

    /// The whole check: the claim parsed, the key found, the signature rebuilt and compared.
    private func authenticate(_ request: HTTPRequest, query: QueryParameters, verdict: S3BodyVerdict) async throws
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
        guard let (secret, keyPrincipal) = signer(of: claim) else { throw S3AuthFailure.unknownKey }
        let verifiable = S3SigV4.Request(
            method: request.method.rawValue, rawPath: request.path, query: request.query,
            header: { headers.values($0) })
        let signingKey = try S3SigV4.verify(
            verifiable, claim: claim, secret: secret, payloadHash: payloadHash, keys: signingKeys)
        // A presigned URL is fetched again with every verified byte the same; header signatures carry a fresh
        // date each time, so they are not kept.
        if claim.expires != nil {
            verifiedRequests.remember(
                request,
                S3VerifiedRequests.Entry(
                    query: query, claim: claim, signedValues: claim.signedHeaders.map { headers.values($0) },
                    payloadHash: payloadHash, secret: secret, signingKey: signingKey))
        }
        let principal = try await principal(of: claim, keyPrincipal, request, query)
        return (principal, try body(request, payloadHash: payloadHash, claim: claim, signingKey: signingKey, verdict))
    }

    /// The secret a claim's access key id signs with, and the key's principal (nil for the session key id,
    /// whose principal is its session token's); nil for an unknown key id.
    private func signer(of claim: S3SigV4.Claim) -> (secret: [UInt8], principal: Principal?)? {
        if claim.credential.accessKeyID.bytesEqual(S3SessionToken.accessKeyID) {
            return (Array(S3SessionToken.secret.utf8), nil)
        }
        return keys.key(id: claim.credential.accessKeyID).map { ($0.secret, $0.principal) }
    }

    /// Who a verified request acts as: the access key's principal, or for the session key id the user whose JWT
    /// is the session token.
    private func principal(
        of claim: S3SigV4.Claim, _ keyPrincipal: Principal?, _ request: HTTPRequest, _ query: QueryParameters
    ) async throws -> Principal? {
        guard claim.credential.accessKeyID.bytesEqual(S3SessionToken.accessKeyID) else { return keyPrincipal }
        guard let token = request.headers["x-amz-security-token"] ?? query["X-Amz-Security-Token"] else {
            throw S3AuthFailure.missingSessionToken
        }
        let principal: Principal?
        do {
            principal = try await sessions.authenticate(authorization: "Bearer " + token)
        } catch {
            throw S3AuthFailure.invalidSessionToken
        }
        guard let principal else { throw S3AuthFailure.invalidSessionToken }
        return principal
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
