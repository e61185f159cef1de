import HTTPServer
import PortcullisCore
import Storage

/// GET metadata (§5.1), GET `alt=media` (§5.2) and `alt=downloadUrl` (DESIGN §7).
extension V0API {
    /// The access check shared by every read: a signed URL or a matching `?token=` bypasses rules, otherwise
    /// rules `get` judge the current object (or nil) BEFORE existence is revealed. Mints the first download
    /// token of an object that has none. Returns the metadata to serve.
    func readAccess(_ call: V0Call, _ backend: any StorageBackend, _ object: ObjectPath) async throws -> ObjectMetadata {
        let current = try await existingMetadata(call, backend, object)
        try authorizeRead(call, object, current: current)
        guard let current else { throw GatewayError.notFound() }
        if current.downloadTokens.isEmpty { return try await mintFirstToken(call, backend, current) }
        return current
    }

    /// Who may read `object` (whose current generation is `current`, nil when absent): a signed URL for it, a
    /// matching `?token=` download token, or the rules' `get` — judged before existence is revealed.
    private func authorizeRead(_ call: V0Call, _ object: ObjectPath, current: ObjectMetadata?) throws {
        if try signedGrant(call, object) {
            // A signed URL authorizes this object's reads.
        } else if let token = call.query["token"], let current, current.downloadTokens.contains(token) {
            call.context.decision = "token"
        } else {
            try authorize(call, .get, bucket: object.bucket, path: object.name, principal: call.principal,
                          resource: current)
        }
    }

    /// Conditional GET (RFC 9110 §13.2.2): generation preconditions and `If-Match` → 412;
    /// `If-None-Match` / `If-Modified-Since` → 304 (returned as a response).
    func conditionalRead(_ call: V0Call, _ meta: ObjectMetadata) throws(GatewayError) -> HTTPResponse? {
        try checkWritePreconditions(call, meta, try queryPreconditions(call))
        let notModified: Bool
        if let ifNoneMatch = call.headers["If-None-Match"] {
            notModified = Self.entityTagList(ifNoneMatch, matches: meta, weak: true)
        } else if let text = call.headers["If-Modified-Since"], let date = HTTPDate.parse(text) {
            notModified = meta.updated.secondsSinceEpoch <= date.secondsSinceEpoch
        } else {
            notModified = false
        }
        guard notModified else { return nil }
        var headers = HTTPHeaders()
        headers.add("ETag", Self.etag(meta))
        headers.add("Last-Modified", meta.updated.httpDate)
        if let cacheControl = meta.cacheControl { headers.add("Cache-Control", cacheControl) }
        return HTTPResponse(status: 304, headers: headers)
    }

    func getMetadata(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let backend = try backend(object.bucket)
        let meta = try await readAccess(call, backend, object)
        if let notModified = try conditionalRead(call, meta) { return notModified }
        return Self.json(MetadataJSON.encode(meta), headers: [("ETag", Self.etag(meta))])
    }

    func download(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let backend = try backend(object.bucket)
        if backend is EmbeddedBackend, !call.routed.isHead, call.headers["Range"] == nil,
           let response = try await downloadWhole(call, backend, object) {
            return response
        }
        let meta = try await readAccess(call, backend, object)
        if let notModified = try conditionalRead(call, meta) { return notModified }

        // One satisfiable `bytes` range → 206; `If-Range` that does not match → the whole object.
        var spec = call.headers["Range"].flatMap { ByteRangeSpec.parse($0) }
        if spec != nil, let ifRange = call.headers["If-Range"] {
            let matches: Bool
            if ifRange.hasPrefix("\"") { matches = ifRange.trimmingSpaces() == Self.etag(meta) }
            else if let date = HTTPDate.parse(ifRange) { matches = date.secondsSinceEpoch == meta.updated.secondsSinceEpoch }
            else { matches = false }
            if !matches { spec = nil }
        }
        if let requested = spec, requested.resolve(size: meta.size) == nil {
            // §5.2: `bytes=0-N` on an empty object is served whole (JS treats 416 as an error).
            if meta.size == 0, case .fromTo(first: 0, _) = requested { spec = nil }
            else { throw GatewayError(StorageError.rangeNotSatisfiable(size: meta.size)) }
        }

        if call.routed.isHead {
            var response = HTTPResponse(status: spec == nil ? 200 : 206, headers: downloadHeaders(meta))
            let length: Int64
            if let range = spec?.resolve(size: meta.size) {
                response.headers.add("Content-Range", "bytes \(range.offset)-\(range.last)/\(meta.size)")
                length = range.length
            } else {
                length = meta.size
            }
            response.headers.add("Content-Length", String(length))
            return response
        }

        let read = try await storage(call) { try await backend.read(object, range: spec) }
        return response(for: read, call)
    }

    /// The whole-object GET on the embedded backend (no `Range`, not HEAD) with ONE index lookup instead of
    /// two: the read (index row + blob open in one lane hop) comes first, and the access check of
    /// `readAccess` then judges exactly the metadata whose bytes would be served. Nothing is revealed before
    /// the check passes: a denied caller gets the same 403 whether or not the object exists, and the opened
    /// region is dropped unsent. (Only where a read is a cheap local open: an upstream backend would start a
    /// transfer before the decision.) Returns nil — use the general path — for an object without a download
    /// token yet, whose first read mints one.
    private func downloadWhole(_ call: V0Call, _ backend: any StorageBackend, _ object: ObjectPath) async throws
        -> HTTPResponse? {
        let read: ObjectRead?
        do {
            read = try await storage(call) { try await backend.read(object, range: nil) }
        } catch StorageError.notFound {
            read = nil
        }
        if let read, read.metadata.downloadTokens.isEmpty {
            // Checked before the access decision so that the general path decides (and counts) it once.
            read.body.discard()
            return nil
        }
        try authorizeRead(call, object, current: read?.metadata)
        guard let read else { throw GatewayError.notFound() }
        if let notModified = try conditionalRead(call, read.metadata) {
            read.body.discard()
            return notModified
        }
        return response(for: read, call)
    }

    /// The 200/206 answer carrying `read`'s bytes.
    private func response(for read: ObjectRead, _ call: V0Call) -> HTTPResponse {
        var response = HTTPResponse(status: 200, headers: downloadHeaders(read.metadata))
        let length: Int64
        if let range = read.range {
            response.status = 206
            response.headers.add("Content-Range", "bytes \(range.offset)-\(range.last)/\(read.metadata.size)")
            call.context.range = "\(range.offset)-\(range.last)"
            length = range.length
        } else {
            length = read.metadata.size
        }
        switch read.body {
        case .file(let region): response.body = .file(region)
        case .stream(let stream): response.body = .stream(stream, length: length)
        }
        return response
    }

    /// The representation headers of an object's bytes (§5.2).
    func downloadHeaders(_ meta: ObjectMetadata) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add("Content-Type", meta.contentType ?? "application/octet-stream")
        headers.add("Content-Disposition", Self.contentDisposition(meta))
        if let encoding = meta.contentEncoding, !encoding.isEmpty, encoding != "identity" {
            headers.add("Content-Encoding", encoding)
        }
        if let language = meta.contentLanguage { headers.add("Content-Language", language) }
        if let cacheControl = meta.cacheControl { headers.add("Cache-Control", cacheControl) }
        headers.add("Accept-Ranges", "bytes")
        headers.add("ETag", Self.etag(meta))
        headers.add("Last-Modified", meta.updated.httpDate)
        var hashes: [String] = []
        if let crc = meta.crc32c { hashes.append("crc32c=\(crc)") }
        if let md5 = meta.md5Hash { hashes.append("md5=\(md5)") }
        if !hashes.isEmpty { headers.add("x-goog-hash", hashes.joined(separator: ",")) }
        headers.add("x-goog-generation", String(meta.generation))
        headers.add("x-goog-metageneration", String(meta.metageneration))
        headers.add("x-goog-storage-class", meta.storageClass)
        return headers
    }

    /// `{stored disposition or attachment}; filename*=UTF-8''{last path component}` (RFC 6266 / RFC 8187),
    /// unless the stored value already names a file.
    static func contentDisposition(_ meta: ObjectMetadata) -> String {
        let stored = meta.contentDisposition ?? "attachment"
        if containsFilename(stored) { return stored }
        // The last non-empty `/`-separated component (the whole name when there is none), found on UTF-8.
        let utf8 = meta.name.utf8
        var end = utf8.endIndex
        while end > utf8.startIndex, utf8[utf8.index(before: end)] == UInt8(ascii: "/") { end = utf8.index(before: end) }
        var start = end
        while start > utf8.startIndex, utf8[utf8.index(before: start)] != UInt8(ascii: "/") { start = utf8.index(before: start) }
        let lastComponent = start == end ? meta.name : String(meta.name[start..<end])
        return "\(stored); filename*=UTF-8''\(PercentDecoding.encodeRFC8187(lastComponent))"
    }

    /// Whether `text` contains `filename` in any ASCII case (without lowercasing a copy).
    private static func containsFilename(_ text: String) -> Bool {
        let needle = Array("filename".utf8)
        let bytes = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        for offset in 0...(bytes.count - needle.count) {
            var matched = true
            for i in 0..<needle.count where bytes[offset + i] | 0x20 != needle[i] {
                matched = false
                break
            }
            if matched { return true }
        }
        return false
    }

    func downloadURL(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let backend = try backend(object.bucket)
        let meta = try await readAccess(call, backend, object)
        // Same generation/metageneration preconditions as a metadata read (400 when malformed, 412 when unmet).
        try checkWritePreconditions(call, meta, try queryPreconditions(call))
        let token = meta.downloadTokens.first ?? ""
        let url = objectURL(call, object) + "?alt=media&token=" + PercentDecoding.encodeComponent(token)
        var body = Array(#"{"downloadUrl":"#.utf8)
        JSONValue.encodeString(url, into: &body)
        body.append(UInt8(ascii: "}"))
        return Self.json(body)
    }
}
