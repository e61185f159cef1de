public import PortcullisCore
public import Upstream

/// A bucket served from Google Cloud Storage through its JSON API (`gs://BUCKET`), over the shared
/// `UpstreamClient`.
///
/// Mapping (docs/configuration.md): GCS generations and metagenerations are ours; custom metadata maps 1:1, download tokens
/// live in `metadata.firebaseStorageDownloadTokens`. Reads pin the generation they resolved the range against
/// and stream the upstream body (206 passed through, never re-buffered). Writes go through a GCS resumable
/// session: chunks of `uploadChunkBytes` are sent as they fill, the last one is held until every byte is in
/// and checksummed, so `beforeCommit`, `expectedMD5` and `expectedSize` are judged before GCS commits the
/// object. Preconditions are passed to GCS (`ifGenerationMatch`, `ifMetagenerationMatch`) and also checked
/// here first, because emulators do not enforce them. Our resumable protocol runs on GCS resumable sessions too
/// (`ResumableStaging`, see GCSBackend+Resumable.swift).
public final class GCSBackend: StorageBackend, UpstreamTraced {
    let configuration: GCSBackendConfiguration
    let client: UpstreamClient
    private let tokens: GCSTokenSource?
    /// Metric label and circuit-breaker key for this bucket.
    let backendLabel: String
    /// The request trace every call carries (a copy made by `traced(by:)`); nil on the shared instance.
    let trace: Trace?
    /// `/b/{bucket}`, the bucket's name encoded: built once, since every call's URL starts with it.
    let bucketPath: String
    /// The JSON API's object collection of the bucket (`{endpoint}/storage/v1/b/{bucket}/o`).
    let objectsURL: String

    public init(configuration: GCSBackendConfiguration, client: UpstreamClient) throws(StorageError) {
        self.configuration = configuration
        self.client = client
        self.backendLabel = "gcs:\(configuration.bucket)"
        self.trace = nil
        bucketPath = "/b/\(PercentEncoding.unreserved.encode(configuration.bucket))"
        objectsURL = "\(configuration.endpoint)/storage/v1\(bucketPath)/o"
        switch configuration.credentials {
        case .none:
            tokens = nil
        case .serviceAccount(let email, let pem, let tokenURI):
            tokens = try GCSTokenSource(clientEmail: email, privateKeyPEM: pem, tokenURI: tokenURI, client: client)
        }
    }

    private init(sharing other: GCSBackend, trace: Trace) {
        configuration = other.configuration
        client = other.client
        tokens = other.tokens
        backendLabel = other.backendLabel
        bucketPath = other.bucketPath
        objectsURL = other.objectsURL
        self.trace = trace
    }

    public func traced(by trace: Trace) -> any StorageBackend { GCSBackend(sharing: self, trace: trace) }

    // MARK: URLs

    func objectURL(_ name: String, query: [(String, String)] = []) -> String {
        url(objectsURL + "/" + PercentEncoding.unreserved.encode(name), query)
    }

    func url(_ base: String, _ query: [(String, String)]) -> String {
        query.isEmpty
            ? base
            : base + "?" + query.map { "\($0.0)=\(PercentEncoding.unreserved.encode($0.1))" }.joined(separator: "&")
    }

    static func preconditionQuery(_ p: Preconditions) -> [(String, String)] {
        var query = [(String, String)]()
        if let g = p.ifGenerationMatch { query.append(("ifGenerationMatch", String(g))) }
        if let m = p.ifMetagenerationMatch { query.append(("ifMetagenerationMatch", String(m))) }
        if let g = p.ifGenerationNotMatch { query.append(("ifGenerationNotMatch", String(g))) }
        if let m = p.ifMetagenerationNotMatch { query.append(("ifMetagenerationNotMatch", String(m))) }
        return query
    }

    // MARK: calls

    /// Sends one request with auth; maps transport failures to `StorageError`.
    func send(
        _ method: String, _ url: String, headers: [(String, String)] = [], body: UpstreamRequestBody = .none,
        op: String, idempotent: Bool? = nil, expectedBodyBytes: Int64? = nil
    ) async throws(StorageError) -> UpstreamResponse {
        var headers = headers
        if let tokens { headers.append(("Authorization", "Bearer \(try await tokens.token())")) }
        let t = configuration.timeouts
        let request = UpstreamRequest(
            method: method, url: url, headers: headers, body: body,
            timeouts: UpstreamTimeouts(connect: t.connect, firstByte: t.firstByte, idle: t.idle),
            idempotent: idempotent, backend: backendLabel, operation: op, trace: trace,
            expectedBodyBytes: expectedBodyBytes)
        do {
            return try await client.send(request)
        } catch {
            throw Self.map(error)
        }
    }

    /// Sends and reads a small JSON answer; non-2xx statuses become errors (404 → `.notFound`).
    func sendJSON(
        _ method: String, _ url: String, json: JSONValue? = nil, headers: [(String, String)] = [],
        op: String, idempotent: Bool? = nil,
        rawBody: [UInt8]? = nil
    ) async throws(StorageError) -> (status: Int, headers: [(String, String)], json: JSONValue?) {
        let (status, headers, bytes) = try await sendForAnswer(
            method, url, json: json, headers: headers, op: op, idempotent: idempotent, rawBody: rawBody)
        return (status, headers, bytes.isEmpty ? nil : try? JSONValue.parse(bytes))
    }

    /// `sendJSON`, with the answer's bytes left unparsed.
    func sendForAnswer(
        _ method: String, _ url: String, json: JSONValue? = nil, headers: [(String, String)] = [],
        op: String, idempotent: Bool? = nil,
        rawBody: [UInt8]? = nil
    ) async throws(StorageError) -> (status: Int, headers: [(String, String)], body: [UInt8]) {
        var headers = headers
        var body = UpstreamRequestBody.none
        if let rawBody {
            body = .bytes(rawBody)
        } else if let json {
            body = .bytes(Array(json.encoded().utf8))
            headers.append(("Content-Type", "application/json; charset=utf-8"))
        }
        let response = try await send(method, url, headers: headers, body: body, op: op, idempotent: idempotent)
        let bytes: [UInt8]
        do { bytes = try await response.body.collect(limit: 16 << 20) } catch {
            throw .unavailable(reason: "GCS answer broke off: \(error)", retryAfter: 1)
        }
        if !(200..<300).contains(response.status) && response.status != 308 {
            throw Self.map(status: response.status, headers: response.headers, body: bytes)
        }
        return (response.status, response.headers, bytes)
    }

    static func map(_ error: UpstreamError) -> StorageError {
        switch error {
        case .circuitOpen(let retryAfter): .unavailable(reason: "GCS circuit open", retryAfter: retryAfter)
        case .timedOut(let phase): .timedOut("GCS \(phase.rawValue)")
        case .connectFailed(let why): .unavailable(reason: "GCS unreachable: \(why)", retryAfter: 1)
        case .requestBodyFailed(let why): .bodyFailed(UpstreamError.requestBodyFailed(why))
        default: .unavailable(reason: "GCS: \(error)", retryAfter: 1)
        }
    }

    static func map(status: Int, headers: [(String, String)], body: [UInt8]) -> StorageError {
        let message =
            (try? JSONValue.parse(body))?["error"]?["message"]?.stringValue
            ?? String(decoding: body.prefix(200), as: UTF8.self)
        switch status {
        case 404: return .notFound
        case 412: return .preconditionFailed
        case 401, 403: return .upstreamDenied("GCS \(status): \(message)")
        case 400: return .invalidArgument("GCS rejected the request: \(message)")
        case 429, 500, 502, 503, 504:
            return .unavailable(
                reason: "GCS \(status): \(message)",
                retryAfter: headers.first(ignoringCase: "retry-after").flatMap { Int($0) } ?? 1)
        default: return .internalError("GCS answered \(status): \(message)")
        }
    }

    // MARK: StorageBackend

    public func metadata(of object: ObjectPath) async throws(StorageError) -> ObjectMetadata {
        try Self.checkAddressable(object.name)
        return try await objectMetadata(object)
    }

    /// The live generation's metadata, or generation `generation`'s (live or noncurrent) when given.
    func objectMetadata(_ object: ObjectPath, generation: Int64? = nil) async throws(StorageError) -> ObjectMetadata {
        let query = generation.map { [("generation", String($0))] } ?? []
        let (_, _, body) = try await sendForAnswer("GET", objectURL(object.name, query: query), op: "metadata")
        guard !body.isEmpty else { throw .internalError("GCS metadata answer was empty") }
        return try GCSObjectCoding.metadata(fromResource: body, bucket: object.bucket)
    }

    public func read(_ object: ObjectPath, range: ByteRangeSpec?) async throws(StorageError) -> ObjectRead {
        try Self.checkAddressable(object.name)
        return try await readObject(object, range: range)
    }

    /// The live generation's bytes, or generation `generation`'s (live or noncurrent) when given.
    func readObject(_ object: ObjectPath, range: ByteRangeSpec?, generation: Int64? = nil) async throws(StorageError)
        -> ObjectRead
    {
        let metadata = try await objectMetadata(object, generation: generation)
        var resolved: ResolvedRange?
        if let range {
            if metadata.size == 0, case .fromTo(0, _) = range {
                resolved = nil
            } else {
                guard let r = range.resolve(size: metadata.size) else {
                    throw .rangeNotSatisfiable(size: metadata.size)
                }
                resolved = r
            }
        }
        // The stored bytes, always: without `Accept-Encoding: gzip` GCS would decompress a gzip-encoded object
        // (decompressive transcoding), which the service decides per client instead.
        var headers = [("Accept-Encoding", "gzip")]
        if let resolved { headers.append(("Range", "bytes=\(resolved.offset)-\(resolved.last)")) }
        let response = try await send(
            "GET",
            objectURL(
                object.name,
                query: [
                    ("alt", "media"),
                    ("generation", String(metadata.generation)),
                ]),
            headers: headers, op: "read", expectedBodyBytes: resolved?.length ?? metadata.size)
        guard response.status == 200 || response.status == 206 else {
            let bytes = (try? await response.body.collect(limit: 64 * 1024)) ?? []
            throw Self.map(status: response.status, headers: response.headers, body: bytes)
        }
        if resolved != nil && response.status == 200 {
            response.body.cancel()
            throw .internalError("GCS ignored the Range header")
        }
        return ObjectRead(metadata: metadata, range: resolved, body: .stream(response.body))
    }

    public func list(_ request: ListRequest) async throws(StorageError) -> ListPage {
        let base = objectsURL
        let bucket = request.bucket
        let fields = request.includeMetadata ? "items,nextPageToken" : "items(name),nextPageToken"
        return try await UpstreamListing.page(
            request,
            fetch: { [self] (from: String, limit: Int) async throws(StorageError) in
                var query = [("prefix", request.prefix), ("maxResults", String(limit)), ("fields", fields)]
                if !from.isEmpty { query.append(("startOffset", from)) }
                let (_, _, json) = try await sendJSON("GET", url(base, query), op: "list")
                var entries: [UpstreamListing.Entry] = []
                for item in json?["items"]?.arrayValue ?? [] {
                    guard let name = item["name"]?.stringValue, !name.bytesHasPrefix(GCSBackend.stagingPrefix) else {
                        continue
                    }
                    // Names must arrive in byte order from `from` on; emulators that ignore `startOffset` are
                    // compensated by dropping what lies before it.
                    guard !Array(name.utf8).lexicographicallyPrecedes(Array(from.utf8)) else { continue }
                    let metadata =
                        request.includeMetadata ? try? GCSObjectCoding.metadata(from: item, bucket: bucket) : nil
                    entries.append(UpstreamListing.Entry(name: name, metadata: metadata))
                }
                return (entries, json?["nextPageToken"]?.stringValue.map { !$0.isEmpty } ?? false)
            },
            describe: { [self] (name: String) async throws(StorageError) in
                guard let path = try? ObjectPath(bucket: bucket, name: name) else { return nil }
                do throws(StorageError) { return try await objectMetadata(path) } catch .notFound { return nil }
            })
    }

    public func write(
        _ object: ObjectPath, body: any ByteStream, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        try Self.checkWritable(object.name)
        return try await writeObject(object, body: body, attributes: attributes, options: options)
    }

    func writeObject(
        _ object: ObjectPath, body: any ByteStream, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata {
        let session = try await startSession(object, attributes: attributes, preconditions: options.preconditions)
        do {
            return try await upload(body, to: session, object: object, attributes: attributes, options: options)
        } catch {
            await cancelSession(session)
            throw error
        }
    }

    public func updateMetadata(
        _ object: ObjectPath, patch: MetadataPatch,
        preconditions: Preconditions
    ) async throws(StorageError) -> ObjectMetadata {
        try await patchObject(object, generation: nil, patch: patch, preconditions: preconditions)
    }

    /// The live object's metadata update, or a kept generation's when `generation` is given.
    func patchObject(
        _ object: ObjectPath, generation: Int64?, patch: MetadataPatch, preconditions: Preconditions
    ) async throws(StorageError) -> ObjectMetadata {
        try Self.checkAddressable(object.name)
        let current = try await objectMetadata(object, generation: generation)
        guard preconditions.isSatisfied(by: current) else { throw .preconditionFailed }
        let next = patch.applied(to: current, now: .now())
        // PATCH with merge semantics, guarded by the (meta)generation we merged against, so it is atomic on GCS.
        var body = [String: JSONValue]()
        func field(_ key: String, _ old: String?, _ new: String?) {
            if !old.bytesEqual(new) { body[key] = new.map { .string($0) } ?? .null }
        }
        field("contentType", current.contentType, next.contentType)
        field("contentEncoding", current.contentEncoding, next.contentEncoding)
        field("contentDisposition", current.contentDisposition, next.contentDisposition)
        field("contentLanguage", current.contentLanguage, next.contentLanguage)
        field("cacheControl", current.cacheControl, next.cacheControl)
        field("customTime", current.customTime?.rfc3339Milliseconds, next.customTime?.rfc3339Milliseconds)
        // Custom keys by their bytes, as a list: a key replaced by a canonically equivalent spelling must be
        // removed and the new one set in one object, which a String-keyed dictionary cannot hold.
        var metadata = [(String, JSONValue)]()
        for key in current.customMetadata.keys where next.customMetadata[exactly: key] == nil {
            metadata.append((key, .null))
        }
        for (key, value) in next.customMetadata where !current.customMetadata[exactly: key].bytesEqual(value) {
            metadata.append((key, .string(value)))
        }
        if !current.downloadTokens.bytesEqual(next.downloadTokens) {
            metadata.append(
                (
                    ObjectMetadata.downloadTokensKey,
                    next.downloadTokens.isEmpty
                        ? .null : .string(next.downloadTokens.joined(separator: ","))
                ))
        }
        var query = [
            ("ifMetagenerationMatch", String(current.metageneration)),
            ("ifGenerationMatch", String(current.generation)),
        ]
        if generation != nil { query.append(("generation", String(current.generation))) }
        let (_, _, json) = try await sendJSON(
            "PATCH", objectURL(object.name, query: query),
            headers: [("Content-Type", "application/json; charset=utf-8")],
            op: "update", idempotent: false,
            rawBody: Self.patchBody(fields: body, metadata: metadata))
        var updated = next
        if let json, let answered = try? GCSObjectCoding.metadata(from: json, bucket: object.bucket) {
            updated.generation = answered.generation
            // Emulator quirk (fake-gcs-server does not bump it): report at least what GCS itself would.
            updated.metageneration = max(answered.metageneration, current.metageneration + 1)
            if answered.updated > current.updated { updated.updated = answered.updated }
        }
        return updated
    }

    /// `{<fields>, "metadata": {<pairs in order>}}`: the PATCH body, with metadata members written as given.
    static func patchBody(fields: [String: JSONValue], metadata: [(String, JSONValue)]) -> [UInt8] {
        var out = Array(JSONValue.object(fields).encoded().utf8)
        guard !metadata.isEmpty else { return out }
        out.removeLast()  // "}"
        if out.count > 1 { out.append(UInt8(ascii: ",")) }
        out.append(contentsOf: #""metadata":{"#.utf8)
        for (i, (key, value)) in metadata.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.encodeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            value.encode(into: &out)
        }
        out.append(contentsOf: "}}".utf8)
        return out
    }

    public func delete(_ object: ObjectPath, preconditions: Preconditions) async throws(StorageError) {
        try Self.checkAddressable(object.name)
        try await deleteObject(object, preconditions: preconditions)
    }

    func deleteObject(_ object: ObjectPath, preconditions: Preconditions) async throws(StorageError) {
        try await checkPreconditions(object, preconditions, mustExist: true)
        _ = try await sendJSON(
            "DELETE", objectURL(object.name, query: Self.preconditionQuery(preconditions)),
            op: "delete", idempotent: true)
    }

    public func isReady() async -> Bool { client.isAvailable(backend: backendLabel) }

    /// Checks preconditions against the current generation before acting (GCS enforces them too; emulators
    /// may not).
    func checkPreconditions(
        _ object: ObjectPath, _ preconditions: Preconditions,
        mustExist: Bool = false
    ) async throws(StorageError) {
        guard preconditions != .none || mustExist else { return }
        var current: ObjectMetadata?
        do { current = try await objectMetadata(object) } catch .notFound { current = nil }
        if mustExist && current == nil { throw .notFound }
        guard preconditions.isSatisfied(by: current) else { throw .preconditionFailed }
    }

    /// Names under this prefix hold resumable-upload records (`GCSUploadRecord`: state, unaligned tail, running
    /// hashes) and spooled chunks; they are hidden from listings. Records of finished uploads are a few bytes
    /// each and stay: a bucket lifecycle rule (`matchesPrefix: [".portcullis-staging/"]`, age ≥ 8 days, past
    /// GCS's one-week session lifetime) removes them.
    static let stagingPrefix = ObjectPath.reservedPrefix

    /// The gateway's own staging objects are no object of the caller's. The object-name policy (`ObjectPath`)
    /// already refuses such names, and `.`/`..` too; this is defence in depth. Reads are "no such object".
    static func checkAddressable(_ name: String) throws(StorageError) {
        if name.bytesHasPrefix(stagingPrefix) { throw .notFound }
    }

    /// Writes to a name `checkAddressable` hides are refused as the caller's error, not sent upstream.
    static func checkWritable(_ name: String) throws(StorageError) {
        if name.bytesHasPrefix(stagingPrefix) {
            throw .invalidArgument("Object names under \(stagingPrefix) are reserved by the gateway.")
        }
    }
}
