public import Crypto
public import PortcullisCore

/// The parts of a request a Google signed URL's signature covers, as the gateway received them.
public struct SignedURLRequest: Sendable {
    /// `GET`, `HEAD`, `PUT`, `DELETE`, `POST`.
    public let method: String
    /// The raw (percent-encoded) path: `/bucket/object`.
    public let path: Substring
    /// The query's pairs, percent-decoded, in order.
    public let query: [(name: String, value: String)]
    /// Every value of a header (by case-insensitive name), in order.
    public let header: @Sendable (String) -> [String]
    /// The names of the request's headers, lower-cased, each once.
    public let headerNames: [String]

    public init(
        method: String, path: Substring, query: [(name: String, value: String)], headerNames: [String],
        header: @escaping @Sendable (String) -> [String]
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headerNames = headerNames
        self.header = header
    }

    func first(_ name: String) -> String? { query.first { $0.name.bytesEqual(name) }?.value }
}

/// What verifies a signer's signatures: an RSA public key (V4 `GOOG4-RSA-SHA256`, V2) or an HMAC secret
/// (V4 `GOOG4-HMAC-SHA256`, V2 HMAC-SHA1; looked up by its access id).
public enum SignedURLKey: Sendable {
    case rsa(PublicKey)
    /// The keys a source currently holds (Google's x509 certificate map for an account, fetched and refreshed
    /// like JWT keys): a signature verifies under any of them (signed URLs name no key id).
    case keySource(KeySource)
    case hmac([UInt8])

    /// Whether an RSA-SHA256 `signature` over `data` verifies under this key (false for an HMAC key).
    func verifiesRSA(_ signature: [UInt8], _ data: [UInt8]) -> Bool {
        switch self {
        case .rsa(let publicKey): return publicKey.verify(signature: signature, data: data, algorithm: .rs256)
        case .keySource(let source):
            for key in (source.current?.keys ?? []).prefix(TokenVerifier.maxAnonymousCandidates) {
                guard case .publicKey(let publicKey) = key.material else { continue }
                if publicKey.verify(signature: signature, data: data, algorithm: .rs256) { return true }
            }
            return false
        case .hmac: return false
        }
    }
}

/// A refused signed URL, in the terms of GCS's XML errors: the code and the message it writes.
public struct SignedURLError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// A required parameter is missing or malformed (400 `InvalidArgument`… per `code`).
        case invalid
        /// Past its expiry (400 `ExpiredToken`).
        case expired
        /// The signature does not verify, or the signer is not trusted (403 `SignatureDoesNotMatch`).
        case mismatch
    }

    public let kind: Kind
    public let message: String

    public var status: Int {
        switch kind {
        case .invalid, .expired: 400
        case .mismatch: 403
        }
    }

    public var code: String {
        switch kind {
        case .invalid: "InvalidArgument"
        case .expired: "ExpiredToken"
        case .mismatch: "SignatureDoesNotMatch"
        }
    }

    public var description: String { "\(code): \(message)" }
}

/// Verification of Google's V4 (`X-Goog-Algorithm=GOOG4-RSA-SHA256` or `GOOG4-HMAC-SHA256`) and V2 (`GoogleAccessId`, `Expires`,
/// `Signature`) signed URLs against the public key of a trusted account, rebuilding the string to sign exactly
/// as Google documents it ("V4 signing process": canonical request = method, path, canonical query without
/// `X-Goog-Signature`, canonical headers, signed headers, payload `UNSIGNED-PAYLOAD` or `x-goog-content-sha256`;
/// string to sign = algorithm, timestamp, credential scope, hex SHA-256 of the canonical request; V2: method,
/// `Content-MD5`, `Content-Type`, expiry, canonical `x-goog-*` headers, resource). Pure.
public enum GoogleSignedURL {
    /// The longest validity V4 allows (7 days), as GCS enforces.
    public static let maxV4Expires: Int64 = 604_800
    /// Clock skew tolerated on a V4 `X-Goog-Date` in the future.
    public static let allowedSkewSeconds: Int64 = 900

    /// Whether the query carries a signed URL's signature (what the XML surface answers for).
    public static let gateKeys = ["X-Goog-Signature", "GoogleAccessId"]

    /// Checks the request's signature; returns the signer's id (an email, or an HMAC key's access id). `key`
    /// gives a trusted signer's key (nil: not trusted, refused as a mismatch, as GCS refuses an unknown signer).
    public static func verify(
        _ request: SignedURLRequest, now: Int64, key: (String) -> SignedURLKey?
    ) throws(SignedURLError) -> String {
        if request.first("X-Goog-Signature") != nil {
            return try verifyV4(request, now: now, key: key)
        }
        return try verifyV2(request, now: now, key: key)
    }

    static func verifyV4(_ request: SignedURLRequest, now: Int64, key: (String) -> SignedURLKey?)
        throws(SignedURLError) -> String
    {
        func invalid(_ text: String) -> SignedURLError { SignedURLError(kind: .invalid, message: text) }
        guard let algorithm = request.first("X-Goog-Algorithm") else { throw invalid("Missing X-Goog-Algorithm.") }
        let isHMAC = algorithm.bytesEqual("GOOG4-HMAC-SHA256")
        guard isHMAC || algorithm.bytesEqual("GOOG4-RSA-SHA256") else {
            throw invalid("Unsupported X-Goog-Algorithm: GOOG4-RSA-SHA256 or GOOG4-HMAC-SHA256.")
        }
        guard let credential = request.first("X-Goog-Credential"), let date = request.first("X-Goog-Date"),
            let expiresText = request.first("X-Goog-Expires"),
            let signedHeaders = request.first("X-Goog-SignedHeaders"),
            let signatureHex = request.first("X-Goog-Signature")
        else { throw invalid("Missing X-Goog-Credential, X-Goog-Date, X-Goog-Expires or X-Goog-SignedHeaders.") }
        let scopeParts = credential.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard scopeParts.count == 5, scopeParts[3].bytesEqual("storage"), scopeParts[4].bytesEqual("goog4_request")
        else { throw invalid("X-Goog-Credential must be EMAIL/DATE/LOCATION/storage/goog4_request.") }
        guard let signedAt = parseBasicTimestamp(date), date.utf8.prefix(8).elementsEqual(scopeParts[1].utf8) else {
            throw invalid("X-Goog-Date must be YYYYMMDD'T'HHMMSS'Z' on the credential's date.")
        }
        guard let expires = Int64(expiresText), expires >= 1, expires <= maxV4Expires else {
            throw invalid("X-Goog-Expires must be 1 to 604800 seconds.")
        }
        guard signedAt <= now + allowedSkewSeconds else { throw invalid("X-Goog-Date is in the future.") }
        guard now < signedAt + expires else {
            throw SignedURLError(kind: .expired, message: "Request has expired: \(date)")
        }
        guard let signature = HexText.decode(signatureHex) else { throw invalid("X-Goog-Signature is not hex.") }

        var query: [(String, String)] = []
        for pair in request.query where !pair.name.bytesEqual("X-Goog-Signature") {
            query.append((encode(pair.name), encode(pair.value)))
        }
        query.sort { $0.0.bytesLess(than: $1.0) || ($0.0.bytesEqual($1.0) && $0.1.bytesLess(than: $1.1)) }
        let canonicalQuery = query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let names = signedHeaders.utf8.split(separator: UInt8(ascii: ";")).map { String(decoding: $0, as: UTF8.self) }
        guard !names.isEmpty, names.contains(where: { $0.bytesEqual("host") }) else {
            throw invalid("X-Goog-SignedHeaders must include host.")
        }
        var canonicalHeaders = ""
        var payload = "UNSIGNED-PAYLOAD"
        for name in names {
            let value = request.header(name).map(collapseSpaces).joined(separator: ",")
            canonicalHeaders += "\(name):\(value)\n"
            if name.bytesEqual("x-goog-content-sha256") { payload = value }
        }
        let canonicalRequest = [
            request.method, try canonicalPath(request.path), canonicalQuery, canonicalHeaders, signedHeaders, payload,
        ].joined(separator: "\n")
        let scope = scopeParts[1...].joined(separator: "/")
        let stringToSign = [algorithm, date, scope, hex(SHA256.hash(Array(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        let signer = scopeParts[0]
        let verified: Bool
        switch key(signer) {
        case .hmac(let secret)? where isHMAC:
            // Google's key derivation: "GOOG4" + secret, then the scope's date, location, service and type.
            var derived = Array("GOOG4".utf8) + secret
            for part in scopeParts[1...] { derived = HMAC.sha256(key: derived, data: Array(part.utf8)) }
            verified = ConstantTime.equals(HMAC.sha256(key: derived, data: Array(stringToSign.utf8)), signature)
        case let rsa? where !isHMAC: verified = rsa.verifiesRSA(signature, Array(stringToSign.utf8))
        default: verified = false
        }
        guard verified else {
            throw SignedURLError(
                kind: .mismatch,
                message: "The request signature we calculated does not match the signature you provided.")
        }
        return signer
    }

    static func verifyV2(_ request: SignedURLRequest, now: Int64, key: (String) -> SignedURLKey?)
        throws(SignedURLError) -> String
    {
        func invalid(_ text: String) -> SignedURLError { SignedURLError(kind: .invalid, message: text) }
        guard let email = request.first("GoogleAccessId"), let expiresText = request.first("Expires"),
            let signatureText = request.first("Signature")
        else { throw invalid("Missing GoogleAccessId, Expires or Signature.") }
        guard let expires = Int64(expiresText) else { throw invalid("Expires must be a number of seconds.") }
        guard now < expires else { throw SignedURLError(kind: .expired, message: "Request has expired: \(expires)") }
        guard let signature = Base64.decode(signatureText) else { throw invalid("Signature is not base64.") }
        var extensions: [(String, String)] = []
        // Canonical extension headers: every x-goog-* header the request carries, lower-cased and sorted.
        for name in request.headerNames where name.utf8.starts(with: "x-goog-".utf8) {
            extensions.append((name, request.header(name).map(collapseSpaces).joined(separator: ",")))
        }
        extensions.sort { $0.0.bytesLess(than: $1.0) }
        var elements = [
            request.method, request.header("content-md5").first ?? "", request.header("content-type").first ?? "",
            expiresText,
        ]
        elements += extensions.map { "\($0.0):\($0.1)" }
        let path = try canonicalPath(request.path)
        // The resource is the path; google-cloud-storage's V2 signer appends the URL's own query parameters
        // (`query_parameters=`, e.g. a bucket listing's `prefix`) to it. A URL that carries parameters beyond the
        // signature's own verifies only in that form: a signature over the bare path would let anyone add or
        // change parameters (another listing prefix, a multipart call) the signer never signed.
        let resources = [v2SignedQuery(request).map { path + "?" + $0 } ?? path]
        let signer = key(email)
        let verified = resources.contains { resource in
            let stringToSign = Array((elements + [resource]).joined(separator: "\n").utf8)
            switch signer {
            // An HMAC key's V2 signature is HMAC-SHA1 of the same string (Cloud Storage's interoperability mode).
            case .hmac(let secret)?:
                return ConstantTime.equals(HMAC.compute(.sha1, key: secret, data: stringToSign), signature)
            case let rsa?: return rsa.verifiesRSA(signature, stringToSign)
            case nil: return false
            }
        }
        guard verified else {
            throw SignedURLError(
                kind: .mismatch,
                message: "The request signature we calculated does not match the signature you provided.")
        }
        return email
    }

    /// The query parameters other than the V2 signature's own, as google-cloud-storage's V2 signer appends them
    /// to the resource: names lower-cased, values trimmed, sorted, form-encoded (space as `+`); nil when none.
    static func v2SignedQuery(_ request: SignedURLRequest) -> String? {
        let own = ["googleaccessid", "expires", "signature"]
        func trimmed(_ text: String) -> String {
            let bytes = Array(text.utf8)
            let isSpace = { (b: UInt8) in b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
            guard let start = bytes.firstIndex(where: { !isSpace($0) }),
                let end = bytes.lastIndex(where: { !isSpace($0) })
            else { return "" }
            return String(decoding: bytes[start...end], as: UTF8.self)
        }
        let pairs = request.query.map { (name: $0.name.lowercased(), value: trimmed($0.value)) }
            .filter { pair in !own.contains { $0.bytesEqual(pair.name) } }
            .sorted {
                $0.name.bytesEqual($1.name) ? $0.value.bytesLess(than: $1.value) : $0.name.bytesLess(than: $1.name)
            }
        guard !pairs.isEmpty else { return nil }
        func form(_ text: String) -> String {
            // Python's urlencode (quote_plus): unreserved characters kept, a space as `+`, the rest %XX.
            // Split on bytes: a space followed by a combining mark is one `Character`, equal to no " ".
            text.bytesSplit(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
                .map { PercentEncoding.unreserved.encode($0) }.joined(separator: "+")
        }
        return pairs.map { form($0.name) + "=" + form($0.value) }.joined(separator: "&")
    }

    /// The path decoded once and re-encoded as Google's signers encode it (unreserved characters and `/` kept).
    static func canonicalPath(_ raw: Substring) throws(SignedURLError) -> String {
        guard let decoded = PercentEncoding.decode(raw, plusIsSpace: false) else {
            throw SignedURLError(kind: .invalid, message: "Malformed percent-encoding in the path.")
        }
        return PercentEncoding.unreservedAndSlash.encode(decoded)
    }

    static func encode(_ text: String) -> String { PercentEncoding.unreserved.encode(text) }

    /// Header values as signed: runs of spaces and tabs collapsed to one space, ends trimmed (by bytes, as the
    /// signers do: a space followed by a combining mark still counts).
    static func collapseSpaces(_ value: String) -> String {
        value.utf8.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            .map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `YYYYMMDDTHHMMSSZ` → Unix seconds.
    static func parseBasicTimestamp(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 16, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "Z") else { return nil }
        let iso =
            String(decoding: b[0..<4], as: UTF8.self) + "-" + String(decoding: b[4..<6], as: UTF8.self) + "-"
            + String(decoding: b[6..<8], as: UTF8.self) + "T" + String(decoding: b[9..<11], as: UTF8.self) + ":"
            + String(decoding: b[11..<13], as: UTF8.self) + ":" + String(decoding: b[13..<15], as: UTF8.self) + "Z"
        return Timestamp(rfc3339: iso)?.secondsSinceEpoch
    }
}
