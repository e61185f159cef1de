import HTTPServer
import PortcullisCore
import Service

/// The small encoding and decoding helpers the JSON API handlers share.
extension JSONAPI {
    func baseURL(_ call: JSONCall) -> String {
        PublicBaseURL.resolve(configured: configuration.publicURL, headers: call.headers)
    }

    /// A JSON response (GCS's content type).
    static func json(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=UTF-8")
        return HTTPResponse(status: status, headers: headers, body: .bytes(body))
    }

    /// The object resource of `meta` with its `ETag`.
    func objectResponse(_ call: JSONCall, _ meta: ObjectMetadata, status: Int = 200) -> HTTPResponse {
        var response = Self.json(
            JSONResources.object(meta, base: baseURL(call), mask: call.fields, fullProjection: call.fullProjection),
            status: status)
        Self.setETag(meta, in: &response.headers)
        return response
    }

    /// A 304 answer: the validators and the isolation headers its 200 would carry, no body.
    static func notModified(_ meta: ObjectMetadata) -> HTTPResponse {
        var response = meta.notModifiedResponse(withCacheControl: false)
        setETag(meta, in: &response.headers)
        return response
    }

    /// The JSON API's `ETag` header is the resource's `etag` as it reads, without quotes, as Cloud Storage's JSON
    /// API sends it: google-cloud-storage copies a download's `ETag` into the blob's `etag` and compares the two.
    /// `If-Match`/`If-None-Match` take the bare and the quoted form (`conditions`).
    static func setETag(_ meta: ObjectMetadata, in headers: inout HTTPHeaders) {
        headers.remove("ETag")
        headers.add("ETag", meta.etag)
    }

    /// A boolean query parameter (`true`/`false`, absent = `fallback`); anything else is 400.
    static func flag(_ call: JSONCall, _ name: String, default fallback: Bool = false) throws(ServiceError) -> Bool {
        switch call.query[name]?.lowercased() {
        case nil: return fallback
        case "true"?, "1"?: return true
        case "false"?, "0"?: return false
        case let other?: throw .badRequest("Invalid value for \(name): \(other).")
        }
    }

    /// The request body as JSON bytes, refusing more than the service's JSON limit (413).
    func collectJSONBody(_ call: JSONCall) async throws(ServiceError) -> [UInt8] {
        try await call.request.collectDocument(limit: service.configuration.maxJSONBodyBytes)
    }
}
