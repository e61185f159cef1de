import Crypto
public import PortcullisCore
public import Upstream

/// A bucket served from S3 or an S3-compatible store (`s3://BUCKET`), signed with SigV4 by `S3Signer`.
///
/// Mapping (docs/configuration.md), documented because S3 has no generations:
/// - custom metadata ↔ `x-amz-meta-<key>`; download tokens ↔ `x-amz-meta-firebasestoragedownloadtokens`;
/// - `generation` = `x-amz-meta-portcullis-generation` (microseconds since the epoch at write time; for
///   objects written by other tools, `Last-Modified` in microseconds), `metageneration` =
///   `x-amz-meta-portcullis-metageneration` (1 on write, +1 on each metadata update), `timeCreated` =
///   `x-amz-meta-portcullis-created`; `md5Hash`/`crc32c` = `x-amz-meta-portcullis-md5`/`-crc32c`, computed as the
///   bytes pass.
/// - Metadata updates are a self-copy with `x-amz-metadata-directive: REPLACE`, one at a time per object
///   version through a claim key created with `If-None-Match: *` (S3Backend+MetadataUpdate).
/// - Writes up to `partBytes` are buffered and sent as one PutObject after the checks and `beforeCommit`
///   (with `Content-MD5`, verified by S3); larger ones stream as a multipart upload (see `S3Backend+Write`).
///   Preconditions are checked against HEAD first. Multipart objects carry the same `portcullis-md5`/`-crc32c`
///   of the whole body (their S3 ETag is not an MD5 and is never reported).
/// - Keys are sent RFC 3986-encoded per path segment (`/` kept, dot segments verbatim) and signed by
///   `S3Signer` (not libcurl, whose 7.88 signer misorders prefix-sharing header names).
/// - Names under `.portcullis-staging/` are reserved (`ObjectPath.reservedPrefix`; hidden from every listing).
/// - Listings ask for `encoding-type=url`, so a key holding a character XML 1.0 cannot carry (most C0
///   controls, U+FFFE, U+FFFF) arrives percent-encoded instead of breaking the whole listing (S3Backend+List).
/// Error mapping: NoSuchKey/404 → `.notFound`, AccessDenied/403 (a bad signature or a skewed clock included) →
/// `.upstreamDenied`, SlowDown/503 and a body altered in transit (XAmzContentSHA256Mismatch, BadDigest) →
/// `.unavailable(retryAfter:)`.
public final class S3Backend: StorageBackend, UpstreamTraced {
    let configuration: S3BackendConfiguration
    let client: UpstreamClient
    let backendLabel: String
    let signer: S3Signer
    /// The request trace every call carries (a copy made by `traced(by:)`); nil on the shared instance. The
    /// trace headers are added after signing: they are not among the signed headers.
    let trace: Trace?

    public init(configuration: S3BackendConfiguration, client: UpstreamClient) {
        self.configuration = configuration
        self.client = client
        self.backendLabel = "s3:\(configuration.bucket)"
        signer = S3Signer(
            accessKeyID: configuration.accessKeyID, secretAccessKey: configuration.secretAccessKey,
            sessionToken: configuration.sessionToken, region: configuration.region)
        trace = nil
    }

    private init(sharing other: S3Backend, trace: Trace) {
        configuration = other.configuration
        client = other.client
        backendLabel = other.backendLabel
        signer = other.signer
        self.trace = trace
    }

    public func traced(by trace: Trace) -> any StorageBackend { S3Backend(sharing: self, trace: trace) }

    static let metaPrefix = "x-amz-meta-"
    static let tokensHeader = "x-amz-meta-firebasestoragedownloadtokens"

    /// URL of `key` (nil = the bucket) with a canonical query string (SigV4 trap 1).
    func url(_ key: String?, query: [(String, String)] = []) -> String {
        var base: String
        if configuration.pathStyle {
            base = "\(configuration.endpoint)/\(PercentEncoding.unreserved.encode(configuration.bucket))"
        } else {
            let scheme = configuration.endpoint.hasPrefix("http://") ? "http://" : "https://"
            base = scheme + configuration.bucket + "." + configuration.endpoint.dropFirst(scheme.count)
        }
        base += "/" + (key.map { PercentEncoding.unreservedAndSlash.encode($0) } ?? "")
        return query.isEmpty ? base : base + "?" + S3Signer.canonicalQuery(query)
    }

    /// Signs (`S3Signer`: the payload hash of an in-memory body, `UNSIGNED-PAYLOAD` for a stream) and sends.
    func send(
        _ method: String, _ url: String, headers: [(String, String)] = [], body: UpstreamRequestBody = .none,
        op: String, idempotent: Bool? = nil, expectedBodyBytes: Int64? = nil
    ) async throws(StorageError) -> UpstreamResponse {
        let payloadHash: String
        switch body {
        case .none: payloadHash = S3Signer.emptyPayloadHash
        case .bytes(let bytes): payloadHash = HexText.encode(SHA256.hash(bytes))
        case .stream: payloadHash = S3Signer.unsignedPayload
        }
        let signed = signer.sign(method: method, url: url, headers: headers, payloadHash: payloadHash)
        do {
            return try await client.send(
                UpstreamRequest(
                    method: method, url: url, headers: signed, body: body,
                    idempotent: idempotent, backend: backendLabel, operation: op, trace: trace,
                    expectedBodyBytes: expectedBodyBytes))
        } catch {
            throw GCSBackend.map(error)
        }
    }

    /// Sends and reads a small answer; non-2xx become errors.
    func exchange(
        _ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        op: String, idempotent: Bool? = nil
    ) async throws(StorageError) -> (headers: [(String, String)], body: [UInt8]) {
        let response = try await send(
            method, url, headers: headers, body: body.map { .bytes($0) } ?? .none, op: op,
            idempotent: idempotent)
        let bytes: [UInt8]
        do { bytes = try await response.body.collect(limit: 16 << 20) } catch {
            throw .unavailable(reason: "S3 answer broke off: \(error)", retryAfter: 1)
        }
        guard (200..<300).contains(response.status) else {
            throw Self.map(status: response.status, headers: response.headers, body: bytes)
        }
        return (response.headers, bytes)
    }

    static func map(status: Int, headers: [(String, String)], body: [UInt8]) -> StorageError {
        let document = body.isEmpty ? nil : try? S3XMLDocument.parse(body)
        let code = document?.errorCode ?? ""
        let message = document?.errorMessage ?? "status \(status)"
        switch (status, code) {
        case (404, _), (_, "NoSuchKey"): return .notFound
        case (412, _): return .preconditionFailed
        case (403, _), (_, "AccessDenied"), (_, "SignatureDoesNotMatch"), (_, "InvalidAccessKeyId"):
            return .upstreamDenied("S3 \(code.isEmpty ? String(status) : code): \(message)")
        case (503, _), (_, "SlowDown"), (500, _), (502, _), (504, _):
            return .unavailable(
                reason: "S3 \(code.isEmpty ? String(status) : code): \(message)",
                retryAfter: headers.first(ignoringCase: "retry-after").flatMap { Int($0) } ?? 1)
        case (_, "XAmzContentSHA256Mismatch"), (_, "BadDigest"):
            // The gateway hashed what it sent: the bytes were altered on the way. Not the client's fault; retry.
            return .unavailable(reason: "S3 \(code): the request body arrived altered", retryAfter: 1)
        case (400, _): return .invalidArgument("S3 rejected the request: \(code) \(message)")
        default: return .internalError("S3 answered \(status) \(code): \(message)")
        }
    }

    // MARK: metadata mapping

    func metadata(from headers: [(String, String)], object: ObjectPath) -> ObjectMetadata {
        var custom = [String: String]()
        var tokens = [String]()
        var own = [String: String]()
        for (name, value) in headers {
            let lower = name.lowercased()
            guard lower.bytesHasPrefix(Self.metaPrefix) else { continue }
            let key = String(decoding: lower.utf8.dropFirst(Self.metaPrefix.utf8.count), as: UTF8.self)
            if lower.bytesEqual(Self.tokensHeader) {
                tokens = value.bytesSplit(separator: UInt8(ascii: ","))
            } else if key.bytesHasPrefix("portcullis-") {
                own[key] = value
            } else {
                // Two stored keys that decode to canonically equivalent spellings cannot both live in the
                // model's map: the later one (header order) is kept, with its own bytes.
                custom[exactly: S3MetadataKey.decode(key)] = S3MetadataKey.decodeValue(value)
            }
        }
        let modified =
            headers.first(ignoringCase: "last-modified").flatMap { Self.parseHTTPDate($0) }
            ?? Timestamp(nanosecondsSinceEpoch: 0)
        let created =
            own["portcullis-created"].flatMap { Int64($0) }.map { Timestamp(nanosecondsSinceEpoch: $0 * 1000) }
            ?? modified
        func text(_ name: String) -> String? { headers.first(ignoringCase: name).flatMap { $0.isEmpty ? nil : $0 } }
        return ObjectMetadata(
            bucket: object.bucket, name: object.name,
            generation: own["portcullis-generation"].flatMap { Int64($0) } ?? modified.nanosecondsSinceEpoch / 1000,
            metageneration: own["portcullis-metageneration"].flatMap { Int64($0) } ?? 1,
            size: headers.first(ignoringCase: "content-length").flatMap { Int64($0) } ?? 0,
            timeCreated: created,
            updated: own["portcullis-updated"].flatMap { Int64($0) }.map { Timestamp(nanosecondsSinceEpoch: $0 * 1000) }
                ?? modified,
            md5Hash: own["portcullis-md5"], crc32c: own["portcullis-crc32c"],
            contentType: text("content-type"), contentEncoding: text("content-encoding"),
            contentDisposition: text("content-disposition"), contentLanguage: text("content-language"),
            cacheControl: text("cache-control"), customMetadata: custom, downloadTokens: tokens)
    }

    /// The request headers that store `metadata` (everything but size).
    func headers(for metadata: ObjectMetadata) -> [(String, String)] {
        var headers = [(String, String)]()
        headers.append(("Content-Type", metadata.contentType ?? "application/octet-stream"))
        if let v = metadata.contentEncoding { headers.append(("Content-Encoding", v)) }
        if let v = metadata.contentDisposition { headers.append(("Content-Disposition", v)) }
        if let v = metadata.contentLanguage { headers.append(("Content-Language", v)) }
        if let v = metadata.cacheControl { headers.append(("Cache-Control", v)) }
        for (key, value) in metadata.customMetadata.sorted(by: { $0.key.bytesLess(than: $1.key) }) {
            headers.append((Self.metaPrefix + S3MetadataKey.encode(key), S3MetadataKey.encodeValue(value)))
        }
        if !metadata.downloadTokens.isEmpty {
            headers.append((Self.tokensHeader, metadata.downloadTokens.joined(separator: ",")))
        }
        headers.append(("x-amz-meta-portcullis-generation", String(metadata.generation)))
        headers.append(("x-amz-meta-portcullis-metageneration", String(metadata.metageneration)))
        headers.append(("x-amz-meta-portcullis-created", String(metadata.timeCreated.nanosecondsSinceEpoch / 1000)))
        headers.append(("x-amz-meta-portcullis-updated", String(metadata.updated.nanosecondsSinceEpoch / 1000)))
        if let md5 = metadata.md5Hash { headers.append(("x-amz-meta-portcullis-md5", md5)) }
        if let crc = metadata.crc32c { headers.append(("x-amz-meta-portcullis-crc32c", crc)) }
        return headers
    }

    // MARK: StorageBackend

    public func metadata(of object: ObjectPath) async throws(StorageError) -> ObjectMetadata {
        try await head(object).metadata
    }

    func head(_ object: ObjectPath) async throws(StorageError) -> (metadata: ObjectMetadata, etag: String?) {
        guard !Self.isHidden(object.name) else { throw .notFound }
        let (headers, _) = try await exchange("HEAD", url(object.name), op: "head", idempotent: true)
        return (metadata(from: headers, object: object), headers.first(ignoringCase: "etag"))
    }

    public func read(_ object: ObjectPath, range: ByteRangeSpec?) async throws(StorageError) -> ObjectRead {
        let (metadata, etag) = try await head(object)
        var resolved: ResolvedRange?
        if let range, !(metadata.size == 0 && { if case .fromTo(0, _) = range { true } else { false } }()) {
            guard let r = range.resolve(size: metadata.size) else { throw .rangeNotSatisfiable(size: metadata.size) }
            resolved = r
        }
        var headers = [(String, String)]()
        if let resolved { headers.append(("Range", "bytes=\(resolved.offset)-\(resolved.last)")) }
        if let etag { headers.append(("If-Match", etag)) }  // the generation we resolved against
        let response = try await send(
            "GET", url(object.name), headers: headers, op: "get", idempotent: true,
            expectedBodyBytes: resolved?.length ?? metadata.size)
        guard response.status == 200 || response.status == 206 else {
            let bytes = (try? await response.body.collect(limit: 64 * 1024)) ?? []
            throw response.status == 412
                ? .notFound : Self.map(status: response.status, headers: response.headers, body: bytes)
        }
        return ObjectRead(metadata: metadata, range: resolved, body: .stream(response.body))
    }

    /// Names under this prefix are the gateway's own (staged writes and resumable chunks): never listed, read,
    /// written or deleted through the v0 API (the object-name policy refuses them). Recommended: an S3
    /// lifecycle rule expiring them after a few days.
    static let stagingPrefix = ObjectPath.reservedPrefix

    static func isHidden(_ name: String) -> Bool { name.bytesHasPrefix(stagingPrefix) }

    public func delete(_ object: ObjectPath, preconditions: Preconditions) async throws(StorageError) {
        guard !Self.isHidden(object.name) else { throw .notFound }
        let current = try await metadata(of: object)
        guard preconditions.isSatisfied(by: current) else { throw .preconditionFailed }
        _ = try await exchange("DELETE", url(object.name), op: "delete", idempotent: true)
    }

    public func isReady() async -> Bool { client.isAvailable(backend: backendLabel) }

    /// IMF-fixdate (`Mon, 30 Nov 2026 10:00:00 GMT`) via the RFC 3339 parser.
    static func parseHTTPDate(_ text: String) -> Timestamp? {
        let parts = text.bytesSplit(separator: UInt8(ascii: " "))
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, let month = months.firstIndex(of: parts[2]) else { return nil }
        let day = parts[1].utf8.count == 1 ? "0" + parts[1] : parts[1]
        let mm = month + 1 < 10 ? "0\(month + 1)" : "\(month + 1)"
        return Timestamp(rfc3339: "\(parts[3])-\(mm)-\(day)T\(parts[4])Z")
    }
}

extension String {
    /// Two lower-case hex digits.
    init(format2 byte: UInt8) { self = HexText.encode([byte]) }
}

/// S3 metadata keys are case-insensitive ASCII header names, and Ceph RGW stores `_` in one as `-`: a key made
/// only of `[a-z0-9-]` (and not starting `--`) is stored as is, any other as `--` + the lower-case hex of its
/// UTF-8 bytes; values outside printable ASCII as RFC 2047-like `=?UTF-8?B?..?=`. Keys stored by earlier
/// versions as `_XX` escapes (on engines that keep `_`) still decode.
enum S3MetadataKey {
    static let hexMarker = "--"

    static func isPlain(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-")
    }

    static func encode(_ key: String) -> String {
        if !key.isEmpty, key.utf8.allSatisfy(isPlain), !key.bytesHasPrefix(hexMarker) { return key }
        return hexMarker + key.utf8.map { String(format2: $0) }.joined()
    }

    static func decode(_ key: String) -> String {
        let utf8 = Array(key.utf8)
        if key.bytesHasPrefix(hexMarker), let bytes = hexBytes(utf8.dropFirst(2)) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return decodeUnderscoreEscapes(utf8[...])
    }

    /// `hex` as bytes, or nil unless it is an even number of hex digits.
    static func hexBytes(_ hex: ArraySlice<UInt8>) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        var rest = hex
        while !rest.isEmpty {
            guard let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
            rest = rest.dropFirst(2)
        }
        return bytes
    }

    /// The earlier form: every byte outside `[a-z0-9-]` as `_` + two hex digits.
    static func decodeUnderscoreEscapes(_ key: ArraySlice<UInt8>) -> String {
        var bytes = [UInt8]()
        var utf8 = key
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "_"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func encodeValue(_ value: String) -> String {
        let printable = value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        // Empty values are encoded too: curl sends `Name;` for an empty header, which SigV4 verifiers reject.
        if printable && !value.isEmpty && !value.bytesHasPrefix("=?UTF-8?B?") && value.utf8.first != UInt8(ascii: " ")
            && value.utf8.last != UInt8(ascii: " ")
        {
            return value
        }
        return "=?UTF-8?B?" + Base64.encode(Array(value.utf8)) + "?="
    }

    static func decodeValue(_ value: String) -> String {
        guard value.hasPrefix("=?UTF-8?B?"), value.hasSuffix("?=") else { return value }
        let encoded = value.dropFirst(10).dropLast(2)
        if encoded.isEmpty { return "" }
        guard let bytes = Base64.decode(encoded) else { return value }
        return String(decoding: bytes, as: UTF8.self)
    }
}
