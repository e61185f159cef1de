import Crypto
import PortcullisCore
import Synchronization

/// AWS Signature V4 for S3, computed here instead of by libcurl (`CURLOPT_AWS_SIGV4`).
///
/// Why our own: libcurl 7.88 sorts the canonical headers as whole `name:value` lines, not by name, so any
/// header whose name is a prefix of another's followed by a byte below `:` (`-`, `.`, a digit) is signed in the
/// wrong order: `x-amz-copy-source` + `x-amz-copy-source-if-match` (conditional self-copy), or custom metadata
/// keys `a` + `a-b`. The verifier (moto, S3) then answers SignatureDoesNotMatch. Signing here also makes the
/// canonical URI explicit (the URL path exactly as sent — the client sets `CURLOPT_PATH_AS_IS`, so dot
/// segments in keys are neither removed nor re-encoded) and lets us sign exactly the headers we send.
///
/// Contract: `url` is the full request URL, its path already RFC 3986-encoded per segment (S3 canonical URIs
/// are not encoded twice) and its query already canonical (`canonicalQuery`). The returned headers
/// (`Authorization`, `X-Amz-Date`, `x-amz-content-sha256`, `x-amz-security-token`) are appended to `headers`.
struct S3Signer: Sendable {
    let accessKeyID: String
    let secretAccessKey: String
    let sessionToken: String?
    let region: String
    private let keyCache = S3SigningKeyCache()

    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The canonical query string SigV4 signs: keys and values RFC 3986-encoded with upper-case hex, sorted
    /// bytewise by key then value, and `=` always present (`uploads=`, not `uploads`). S3 request URLs are
    /// built with it, so what is sent is exactly what is signed.
    static func canonicalQuery(_ items: [(String, String)]) -> String {
        items.map { (PercentEncoding.unreserved.encode($0.0), PercentEncoding.unreserved.encode($0.1)) }
            .sorted {
                $0.0.bytesEqual($1.0)
                    ? $0.1.utf8.lexicographicallyPrecedes($1.1.utf8)
                    : $0.0.utf8.lexicographicallyPrecedes($1.0.utf8)
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
    static let emptyPayloadHash = HexText.encode(SHA256.hash([UInt8]()))

    /// `headers` plus the signature headers. `payloadHash` is the hex SHA-256 of the body or `UNSIGNED-PAYLOAD`.
    func sign(
        method: String, url: String, headers: [(String, String)], payloadHash: String,
        now: Timestamp = .now()
    ) -> [(String, String)] {
        let (host, path, query) = Self.split(url)
        let amzDate = Self.amzDate(now)
        let day = String(amzDate.prefix(8))
        var all = headers
        all.append(("x-amz-date", amzDate))
        all.append(("x-amz-content-sha256", payloadHash))
        if let sessionToken { all.append(("x-amz-security-token", sessionToken)) }

        // Signed: host, content-type, content-md5 and every x-amz-* header, sorted by (lower-cased) name.
        var canonical: [(String, String)] = [("host", host)]
        for (name, value) in all {
            let lower = name.lowercased()
            guard lower.hasPrefix("x-amz-") || lower == "content-type" || lower == "content-md5" else { continue }
            canonical.append((lower, Self.trim(value)))
        }
        canonical.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        // Repeated names are joined with commas (we never send any, but keep the rule).
        var merged = [(String, String)]()
        for (name, value) in canonical {
            if let last = merged.last, last.0.bytesEqual(name) {
                merged[merged.count - 1].1 += "," + value
            } else {
                merged.append((name, value))
            }
        }
        let signedHeaders = merged.map(\.0).joined(separator: ";")
        let canonicalRequest = [
            method, path.isEmpty ? "/" : path, query,
            merged.map { "\($0.0):\($0.1)\n" }.joined(), signedHeaders, payloadHash,
        ]
        .joined(separator: "\n")
        let scope = "\(day)/\(region)/s3/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, HexText.encode(SHA256.hash(Array(canonicalRequest.utf8))),
        ]
        .joined(separator: "\n")
        let signature = HexText.encode(HMAC.sha256(key: signingKey(day: day), data: Array(stringToSign.utf8)))
        var result = all
        result.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), "
                    + "SignedHeaders=\(signedHeaders), Signature=\(signature)"
            ))
        return result
    }

    /// `host[:port]` as libcurl sends it in `Host` (default ports dropped), the raw path, the raw query.
    static func split(_ url: String) -> (host: String, path: String, query: String) {
        var rest = Substring(url)
        var defaultPort = ""
        if let range = rest.firstRange(of: "://") {
            defaultPort = rest[..<range.lowerBound].bytesEqualIgnoringASCIICase("https") ? ":443" : ":80"
            rest = rest[range.upperBound...]
        }
        let authorityEnd = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        var host = String(rest[..<authorityEnd]).lowercased()
        if host.hasSuffix(defaultPort) { host.removeLast(defaultPort.count) }
        rest = rest[authorityEnd...]
        if let mark = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            return (host, String(rest[..<mark]), String(rest[rest.utf8.index(after: mark)...]))
        }
        return (host, String(rest), "")
    }

    /// `YYYYMMDDTHHMMSSZ` in UTC.
    static func amzDate(_ time: Timestamp) -> String {
        let seconds = time.secondsSinceEpoch
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let (year, month, day) = Timestamp.civilFromDays(days)
        let inDay = seconds - days * 86_400
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)\(two(month))\(two(day))T\(two(inDay / 3600))\(two(inDay / 60 % 60))\(two(inDay % 60))Z"
    }

    /// A header value as SigV4 canonicalises it (`SigV4.appendTrimmed`).
    static func trim(_ value: String) -> String {
        var out: [UInt8] = []
        SigV4.appendTrimmed(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The SigV4 signing key of `day` (`YYYYMMDD`): four HMACs that change once a day, so the last one is kept.
    func signingKey(day: String) -> [UInt8] {
        if let cached = keyCache.key(for: day) { return cached }
        let key = SigV4.signingKey(secret: Array(secretAccessKey.utf8), day: day, region: region, service: "s3")
        keyCache.store(key, for: day)
        return key
    }
}

/// The last derived signing key and its day (shared by copies of a signer; its secret and region never change).
final class S3SigningKeyCache: Sendable {
    private let last = Mutex<(day: String, key: [UInt8])?>(nil)

    func key(for day: String) -> [UInt8]? {
        last.withLock { entry in entry.flatMap { $0.day.utf8.elementsEqual(day.utf8) ? $0.key : nil } }
    }

    func store(_ key: [UInt8], for day: String) { last.withLock { $0 = (day, key) } }
}
