import HTTPServer
import PortcullisCore
import Service

/// The small encoding and decoding helpers every v0 handler shares.
extension V0API {
    /// The external base URL (`--public-url`, else `http://{Host}`), without a trailing slash.
    func baseURL(_ call: V0Call) -> String {
        PublicBaseURL.resolve(configured: configuration.publicURL, headers: call.headers)
    }

    /// `{base}/v0/b/{bucket}/o/{object}` with both segments encoded like `encodeURIComponent`.
    func objectURL(_ call: V0Call, _ object: ObjectPath) -> String {
        baseURL(call) + "/v0/b/" + PercentEncoding.uriComponent.encode(object.bucket) + "/o/"
            + PercentEncoding.uriComponent.encode(object.name)
    }

    /// A JSON response (200 unless told otherwise).
    static func json(_ body: [UInt8], status: Int = 200, headers extra: [(String, String)] = []) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        for (name, value) in extra { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: .bytes(body))
    }

    /// The metadata resource of `meta` with its `ETag`.
    static func metadataResponse(_ meta: ObjectMetadata) -> HTTPResponse {
        var response = json(V0MetadataJSON.encode(meta))
        response.headers.add("ETag") { EntityTag.appendQuoted(meta, to: &$0) }
        return response
    }

    /// A 304 answer for `meta`: its validators and the isolation headers its 200 would carry, no body.
    static func notModified(_ meta: ObjectMetadata) -> HTTPResponse {
        meta.notModifiedResponse(withCacheControl: true)
    }

    /// Whether the body is declared as JSON (or not declared at all): only then is it parsed as JSON metadata
    /// (resumable start, signed-URL requests); other bodies are ignored.
    static func bodyIsJSON(_ call: V0Call) -> Bool {
        guard let type = call.headers["Content-Type"] else { return true }
        return type.lowercased().contains("json")
    }

    /// The request body as JSON bytes, refusing more than the service's JSON limit (413).
    func collectJSONBody(_ call: V0Call) async throws(ServiceError) -> [UInt8] {
        try await call.request.collectDocument(limit: service.configuration.maxJSONBodyBytes)
    }

    /// Parses a non-negative decimal header value (400 when present but not a number).
    static func int64Header(_ headers: HTTPHeaders, _ names: String...) throws(ServiceError) -> Int64? {
        for name in names {
            guard let text = headers[name] else { continue }
            guard let value = Int64(text.trimmingSpaces()), value >= 0 else {
                throw .badRequest("\(name) must be a non-negative integer.")
            }
            return value
        }
        return nil
    }

    /// Refuses a body the `Content-Length` already shows is too large, before reading it (413), and checks the
    /// resumable size/offset headers on every upload request: a malformed value is 400, a declared size or
    /// offset beyond the ceiling 413 — also on upload kinds that do not use them, so no request carrying
    /// nonsense is silently accepted. `allowance` covers an envelope around the object (multipart, JSON).
    func checkDeclaredLength(_ call: V0Call, allowance: Int64 = 0) throws(ServiceError) {
        let limit = service.configuration.maxObjectBytes
        if let length = call.request.body.expectedLength, length > limit + allowance {
            throw .payloadTooLarge(limit: limit)
        }
        for name in ["X-Goog-Upload-Header-Content-Length", "X-Goog-Upload-Content-Length", "X-Goog-Upload-Offset"] {
            if let value = try Self.int64Header(call.headers, name), value > limit {
                throw .payloadTooLarge(limit: limit)
            }
        }
    }

    /// Fills the multipart upload defaults: `application/octet-stream` and `inline` (the service mints the
    /// download token).
    static func completeAttributes(_ attributes: ObjectAttributes, contentType fallback: String?) -> ObjectAttributes {
        var a = attributes
        if a.contentType == nil {
            a.contentType = fallback.flatMap { $0.isEmpty ? nil : $0 } ?? "application/octet-stream"
        }
        if a.contentDisposition == nil { a.contentDisposition = "inline" }
        return a
    }
}
