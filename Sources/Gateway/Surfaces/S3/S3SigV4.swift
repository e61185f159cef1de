import Crypto
import PortcullisCore
import Storage

/// AWS Signature Version 4 as a server checks it: the canonical request rebuilt from what arrived, the string to
/// sign, the signing key, and the signature compared in constant time.
///
/// Pure: no clock, no key lookup, no I/O — the caller passes the time and a function from access key id to
/// secret, so the published test vectors run against exactly the code the surface uses.
enum S3SigV4 {
    static let algorithm = "AWS4-HMAC-SHA256"
    /// Skew allowed between the request's `X-Amz-Date` and the gateway's clock (S3's 15 minutes).
    static let allowedSkewSeconds: Int64 = 900
    /// The longest presigned URL lifetime S3 accepts (7 days).
    static let maxPresignSeconds: Int64 = 604_800

    /// The parts of `Credential=AKID/DAY/REGION/SERVICE/aws4_request`: slices of the text as it arrived, so
    /// parsing one (every signed request does) copies nothing.
    struct Credential: Sendable {
        /// `AKID/DAY/REGION/SERVICE/aws4_request`, whole.
        let text: Substring
        let accessKeyID: Substring
        let day: Substring
        let region: Substring
        let service: Substring

        /// `DAY/REGION/SERVICE/aws4_request`, as the string to sign names it.
        var scopeText: Substring { text[day.startIndex...] }
        var scope: String { String(scopeText) }

        init(parsing text: Substring) throws(S3AuthFailure) {
            // Cut on the contiguous bytes: `/` is ASCII, so the pieces are whole UTF-8.
            let slashes = text.withContiguousUTF8 { bytes -> (Int, Int, Int, Int)? in
                func slash(after start: Int) -> Int? {
                    bytes[start...].firstIndex(of: UInt8(ascii: "/"))
                }
                guard let s0 = slash(after: 0), s0 > 0, let s1 = slash(after: s0 + 1), s1 - s0 == 9,
                    let s2 = slash(after: s1 + 1), let s3 = slash(after: s2 + 1),
                    bytes[(s3 + 1)...].elementsEqual("aws4_request".utf8)
                else { return nil }
                return (s0, s1, s2, s3)
            }
            guard let (s0, s1, s2, s3) = slashes else {
                throw .malformed("The credential is not AKID/YYYYMMDD/REGION/SERVICE/aws4_request.")
            }
            func at(_ offset: Int) -> String.Index { text.utf8.index(text.startIndex, offsetBy: offset) }
            self.text = text
            accessKeyID = text[..<at(s0)]
            day = text[at(s0 + 1)..<at(s1)]
            region = text[at(s1 + 1)..<at(s2)]
            service = text[at(s2 + 1)..<at(s3)]
        }
    }

    /// What a request claims about its signature, from the `Authorization` header or the presigned query.
    struct Claim: Sendable {
        var credential: Credential
        var signedHeaders: [String]
        var signature: String
        /// `YYYYMMDDTHHMMSSZ`.
        var amzDate: String
        /// Presigned: the lifetime in seconds; nil for header signatures.
        var expires: Int64?
    }

    /// A request as the verifier reads it. `rawPath` is the path as it arrived (percent-encoded); `query` the
    /// raw query string; `header` answers the values of a lower-cased header name.
    struct Request {
        var method: String
        var rawPath: Substring
        var query: Substring?
        var header: (String) -> [String]
    }

    /// The `Authorization` header's claim: `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
    static func headerClaim(_ authorization: String, amzDate: String?) throws(S3AuthFailure) -> Claim {
        guard let fields = authorization.bytesRemovingPrefix(algorithm + " ") else {
            throw .malformed("Only AWS4-HMAC-SHA256 signatures are accepted.")
        }
        var credential: Credential?
        var signedHeaders: [String]?
        var signature: String?
        // Cut by bytes: `,`, `=` or `;` with a combining mark after it is one `Character` with it.
        for part in fields.bytesSplit(separator: UInt8(ascii: ",")) {
            guard
                let (name, value) = part.trimmingASCII(where: { $0 == UInt8(ascii: " ") })
                    .bytesCut(at: UInt8(ascii: "="))
            else { continue }
            switch name {
            case "Credential": credential = try Credential(parsing: Substring(value))
            case "SignedHeaders": signedHeaders = value.bytesSplit(separator: UInt8(ascii: ";"))
            case "Signature": signature = value
            default: continue
            }
        }
        guard let credential, let signedHeaders, let signature, let amzDate else {
            throw .malformed("The Authorization header needs Credential, SignedHeaders, Signature and X-Amz-Date.")
        }
        return Claim(
            credential: credential, signedHeaders: signedHeaders, signature: signature, amzDate: amzDate,
            expires: nil)
    }

    /// The presigned query's claim (`X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`,
    /// `X-Amz-SignedHeaders`, `X-Amz-Signature`), from decoded query pairs.
    static func queryClaim(_ pairs: [(name: String, value: String)]) throws(S3AuthFailure) -> Claim {
        func value(_ name: String) -> String? { pairs.first { $0.name.bytesEqual(name) }?.value }
        guard value("X-Amz-Algorithm")?.bytesEqual(algorithm) == true else {
            throw .malformed("X-Amz-Algorithm must be AWS4-HMAC-SHA256.")
        }
        guard let credentialText = value("X-Amz-Credential"), let date = value("X-Amz-Date"),
            let expiresText = value("X-Amz-Expires"), let expires = Int64(expiresText),
            let signedHeaders = value("X-Amz-SignedHeaders"), let signature = value("X-Amz-Signature")
        else {
            throw .malformed("A presigned URL needs X-Amz-Credential, -Date, -Expires, -SignedHeaders, -Signature.")
        }
        guard (1...maxPresignSeconds).contains(expires) else {
            throw .malformed("X-Amz-Expires must be between 1 and \(maxPresignSeconds) seconds.")
        }
        return Claim(
            credential: try Credential(parsing: Substring(credentialText)),
            signedHeaders: signedHeaders.bytesSplit(separator: UInt8(ascii: ";")), signature: signature,
            amzDate: date, expires: expires)
    }

    /// Seconds since the epoch of `YYYYMMDDTHHMMSSZ`, nil when it is not one.
    static func seconds(amzDate text: String) -> Int64? {
        text.withContiguousUTF8 { seconds(amzDate: $0) }
    }

    private static func seconds(amzDate bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
            let minute = number(11..<13), let second = number(13..<15), (1...12).contains(month),
            (1...31).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        return Timestamp.daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// Checks the claim's time against `now`: a header signature within the skew, a presigned URL not expired
    /// (and not dated in the future beyond the skew).
    static func checkTime(_ claim: Claim, now: Int64) throws(S3AuthFailure) {
        guard let signedAt = seconds(amzDate: claim.amzDate), claim.amzDate.bytesHasPrefix(claim.credential.day) else {
            throw .malformed("X-Amz-Date is not YYYYMMDDTHHMMSSZ of the credential's day.")
        }
        if let expires = claim.expires {
            if signedAt - now > allowedSkewSeconds { throw .skewed }
            if now > signedAt + expires { throw .expired }
        } else if abs(now - signedAt) > allowedSkewSeconds {
            throw .skewed
        }
    }

    /// The canonical request: method, canonical URI, canonical query (without `X-Amz-Signature`), the signed
    /// headers' canonical lines, their names, and the payload hash as declared.
    static func canonicalRequest(_ request: Request, signedHeaders: [String], payloadHash: String) throws(S3AuthFailure)
        -> String
    {
        String(
            decoding: try canonicalRequestBytes(request, signedHeaders: signedHeaders, payloadHash: payloadHash),
            as: UTF8.self)
    }

    /// `canonicalRequest` as the bytes that are hashed. Every request is verified, so it is built in one buffer
    /// straight from the request's bytes: no text is decoded into a `String` on the way.
    static func canonicalRequestBytes(_ request: Request, signedHeaders: [String], payloadHash: String)
        throws(S3AuthFailure) -> [UInt8]
    {
        var out: [UInt8] = []
        out.reserveCapacity(512 + request.rawPath.utf8.count + (request.query?.utf8.count ?? 0))
        out += request.method.utf8
        out.append(newline)
        guard appendCanonicalURI(request.rawPath, to: &out) else {
            throw .malformed("Malformed percent-encoding in the path.")
        }
        out.append(newline)
        guard appendCanonicalQuery(request.query, to: &out) else {
            throw .malformed("Malformed percent-encoding in the query.")
        }
        out.append(newline)
        for name in signedHeaders {
            out += name.utf8
            out.append(UInt8(ascii: ":"))
            for (index, value) in request.header(name).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                SigV4.appendTrimmed(value, to: &out)
            }
            out.append(newline)
        }
        out.append(newline)
        for (index, name) in signedHeaders.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ";")) }
            out += name.utf8
        }
        out.append(newline)
        out += payloadHash.utf8
        return out
    }

    private static let newline = UInt8(ascii: "\n")

    /// The path decoded once and each byte outside RFC 3986's unreserved set (and `/`) encoded, upper-case hex:
    /// what S3 clients sign, whichever way they chose to escape the path they sent.
    static func canonicalURI(_ rawPath: Substring) -> String? {
        var out: [UInt8] = []
        guard appendCanonicalURI(rawPath, to: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `canonicalURI(rawPath)`; false for malformed percent-encoding.
    static func appendCanonicalURI(_ rawPath: Substring, to out: inout [UInt8]) -> Bool {
        let start = out.count
        let valid = rawPath.withContiguousUTF8 {
            PercentEncoding.unreservedAndSlash.appendReencoded($0, to: &out)
        }
        if valid, out.count == start { out.append(UInt8(ascii: "/")) }
        return valid
    }

    /// The query's pairs decoded, re-encoded, sorted bytewise by name then value, `=` always present;
    /// `X-Amz-Signature` left out.
    static func canonicalQuery(_ query: Substring?) -> String? {
        var out: [UInt8] = []
        guard appendCanonicalQuery(query, to: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `canonicalQuery(query)`; false for malformed percent-encoding. The query is cut as `QueryPieces`
    /// cuts it, empty pieces dropped; each name and value is re-encoded once into one buffer, and the pairs are
    /// sorted as ranges of it.
    static func appendCanonicalQuery(_ query: Substring?, to out: inout [UInt8]) -> Bool {
        guard let query, !query.isEmpty else { return true }
        var encoded: [UInt8] = []
        var pairs: [(name: Range<Int>, value: Range<Int>)] = []
        pairs.reserveCapacity(8)
        let encoding = PercentEncoding.unreserved
        let valid = query.withContiguousUTF8 { bytes in
            encoded.reserveCapacity(bytes.count + 32)
            for piece in QueryPieces(bytes) where !(piece.name.isEmpty && piece.value == nil) {
                let nameStart = encoded.count
                guard
                    encoding.appendReencoded(UnsafeBufferPointer(rebasing: piece.name), to: &encoded)
                else { return false }
                if encoded.count - nameStart == signatureName.count,
                    encoded.withUnsafeBufferPointer({ $0[nameStart...].elementsEqual(signatureName) })
                {
                    encoded.removeSubrange(nameStart...)
                    continue
                }
                let valueStart = encoded.count
                if let value = piece.value,
                    !encoding.appendReencoded(UnsafeBufferPointer(rebasing: value), to: &encoded)
                {
                    return false
                }
                pairs.append((nameStart..<valueStart, valueStart..<encoded.count))
            }
            return true
        }
        guard valid else { return false }
        encoded.withUnsafeBufferPointer { encoded in
            pairs.sort {
                let a = encoded[$0.name], b = encoded[$1.name]
                return a.elementsEqual(b)
                    ? encoded[$0.value].lexicographicallyPrecedes(encoded[$1.value]) : a.lexicographicallyPrecedes(b)
            }
            for (index, pair) in pairs.enumerated() {
                if index > 0 { out.append(UInt8(ascii: "&")) }
                out += encoded[pair.name]
                out.append(UInt8(ascii: "="))
                out += encoded[pair.value]
            }
        }
        return true
    }

    private static let signatureName = Array("X-Amz-Signature".utf8)

    /// The signing key of `credential`'s scope.
    static func signingKey(secret: [UInt8], credential: Credential) -> [UInt8] {
        SigV4.signingKey(secret: secret, day: credential.day, region: credential.region, service: credential.service)
    }

    static func signature(signingKey: [UInt8], stringToSign: String) -> String {
        HexText.encode(HMAC.sha256(key: signingKey, data: Array(stringToSign.utf8)))
    }

    /// Checks `claim` for `request` with `secret`; returns the signing key (the aws-chunked body's chunk
    /// signatures chain from it). The signature is compared in constant time. `keys`, when given, keeps the
    /// signing key of each access key and day: it changes once a day, and deriving it is four HMACs.
    static func verify(
        _ request: Request, claim: Claim, secret: [UInt8], payloadHash: String, keys: S3SigningKeys? = nil
    ) throws(S3AuthFailure) -> [UInt8] {
        guard claim.signedHeaders.contains(where: { $0.bytesEqual("host") }) else {
            throw .malformed("SignedHeaders must include host.")
        }
        let canonical = try canonicalRequestBytes(
            request, signedHeaders: claim.signedHeaders, payloadHash: payloadHash)
        let key =
            keys?.key(secret: secret, credential: claim.credential)
            ?? signingKey(secret: secret, credential: claim.credential)
        var toSign: [UInt8] = []
        toSign.reserveCapacity(160)
        toSign += algorithm.utf8
        toSign.append(newline)
        toSign += claim.amzDate.utf8
        toSign.append(newline)
        toSign += claim.credential.scopeText.utf8
        toSign.append(newline)
        // The raw-buffer entry points: the `Sequence` ones are generic across the module boundary, so each call
        // would dispatch through witness tables.
        HexText.append(canonical.withUnsafeBytes { SHA256.hash($0) }, to: &toSign)
        let mac = key.withUnsafeBytes { key in toSign.withUnsafeBytes { HMAC.compute(.sha256, key: key, data: $0) } }
        var expected: [UInt8] = []
        expected.reserveCapacity(64)
        HexText.append(mac, to: &expected)
        let matches = claim.signature.withContiguousUTF8 { ConstantTime.equals(expected, $0) }
        guard matches else { throw .mismatch }
        return key
    }

}

/// Why a SigV4 signature was refused; `S3Error` words each for the wire.
enum S3AuthFailure: Error, Sendable, Equatable {
    case malformed(String)
    case unknownKey
    case mismatch
    case skewed
    case expired
    case missingSessionToken
    case invalidSessionToken
}

/// Signing keys already derived, per access key, secret and credential scope: a key is valid for one day, one
/// region and one service, and its secret; a reloaded key file with a new secret derives anew. Bounded: past
/// `capacity` entries the cache starts over.
final class S3SigningKeys: Sendable {
    private struct Entry: Sendable {
        let secret: [UInt8]
        let key: [UInt8]
    }

    private let memo: StartOverMemo<ExactString, Entry>

    init(capacity: Int = 1024) { memo = StartOverMemo(capacity: capacity) }

    func key(secret: [UInt8], credential: S3SigV4.Credential) -> [UInt8] {
        let id = ExactString(String(credential.text))
        if let hit = memo.value(for: id), hit.secret == secret { return hit.key }
        let key = S3SigV4.signingKey(secret: secret, credential: credential)
        memo.remember(Entry(secret: secret, key: key), for: id)
        return key
    }
}
