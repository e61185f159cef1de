public import HTTPServer
import PortcullisCore
import Service

/// CORS for browser apps: a preflight allows the request headers the matched route's surface
/// declares, and every response to an allowed origin exposes the headers that surface's clients read
/// (`SurfaceTraits.corsRequestHeaders` / `corsExposedHeaders`: `X-Goog-Upload-*` for the Firebase SDKs — without
/// them a browser upload fails with `storage/unknown` — `Location` and `Range` for a JSON API resumable upload).
///
/// Origins come from `--cors-origins`: a matching origin is reflected; `*` reflects any origin (so the answer
/// stays valid for requests that carry credentials) and adds `Vary: Origin`.
public struct CORSPolicy: Sendable {
    public let origins: [String]
    private let allowAny: Bool

    /// What the Firebase SDKs send (v0).
    public static let firebaseRequestHeaders = [
        "Authorization", "Content-Type", "Range", "If-Match", "If-None-Match", "If-Modified-Since",
        "If-Unmodified-Since", "If-Range", "X-Firebase-AppCheck", "X-Firebase-Storage-Version", "X-Firebase-GMPID",
        "X-Goog-Upload-Protocol", "X-Goog-Upload-Command", "X-Goog-Upload-Offset", "X-Goog-Upload-Content-Length",
        "X-Goog-Upload-Content-Type", "X-Goog-Upload-Header-Content-Length", "X-Goog-Upload-Header-Content-Type",
        "X-HTTP-Method-Override", "X-Request-Id", "traceparent",
    ]
    /// What the Firebase SDKs read (v0).
    public static let firebaseExposedHeaders = [
        "Content-Type", "Content-Length", "Content-Range", "Content-Disposition", "Content-Encoding", "ETag",
        "Last-Modified", "Accept-Ranges", "Cache-Control", "Retry-After", "X-Request-Id",
        "X-Firebase-Storage-Version", "X-Goog-Upload-Status", "X-Goog-Upload-URL", "X-Goog-Upload-Size-Received",
        "X-Goog-Upload-Chunk-Granularity", "X-Goog-Upload-Command", "X-Goog-Upload-Control-URL",
        "X-Goog-Upload-Header-Content-Length", "X-Goog-Upload-Header-Content-Type", "X-Goog-Upload-Protocol",
        "X-GUploader-UploadID", "X-GUpload-UploadID", "x-goog-hash", "x-goog-generation", "x-goog-metageneration",
        "x-goog-storage-class",
    ]

    public init(origins: [String]) {
        self.origins = origins
        self.allowAny = origins.contains("*")  // grapheme-ok: an element of a list of origins, not a Character
    }

    /// Whether `origin` may read responses.
    public func allows(origin: String) -> Bool {
        allowAny || origins.contains { $0.bytesEqualIgnoringASCIICase(origin) }
    }

    /// The answer to an OPTIONS request on a route serving `methods`: a preflight gets the allow headers (or
    /// 403 for a foreign origin or a method the route does not serve); a plain OPTIONS lists the methods.
    public func preflight(_ request: HTTPRequest, methods: [String], for surface: SurfaceTraits) -> HTTPResponse {
        var headers = HTTPHeaders()
        let allow = methods.joined(separator: ", ")
        headers.add("Allow", allow)
        guard let requestedMethod = request.headers["Access-Control-Request-Method"] else {
            return HTTPResponse(status: 204, headers: headers)
        }
        let requested = requestedMethod.trimmingSpaces()
        guard methods.contains(requested) else {
            return PlainErrorShape().response(
                for: .forbidden("Method \(requested) is not allowed here."), requestID: nil)
        }
        guard let origin = request.headers["Origin"] else { return HTTPResponse(status: 204, headers: headers) }
        guard allows(origin: origin) else {
            return PlainErrorShape().response(for: .forbidden("Origin \(origin) is not allowed."), requestID: nil)
        }
        headers.add("Access-Control-Allow-Origin", origin)
        headers.add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
        headers.add("Access-Control-Allow-Methods", allow)
        headers.add(
            "Access-Control-Allow-Headers",
            allowHeaders(surface.corsRequestHeaders, for: request.headers["Access-Control-Request-Headers"]))
        headers.add("Access-Control-Max-Age", "3600")
        if let pna = request.headers["Access-Control-Request-Private-Network"],
            pna.bytesEqualIgnoringASCIICase("true")
        {
            headers.add("Access-Control-Allow-Private-Network", "true")
        }
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Adds the CORS response headers for an allowed origin to an actual (non-preflight) response.
    public func decorate(_ response: inout HTTPResponse, for request: HTTPRequest, surface: SurfaceTraits) {
        guard let origin = request.headers["Origin"], allows(origin: origin) else { return }
        response.headers.set("Access-Control-Allow-Origin", origin)
        response.headers.add("Vary", "Origin")
        if !surface.corsExposedHeaders.isEmpty {
            response.headers.set("Access-Control-Expose-Headers", surface.corsExposedValue)
        }
    }

    /// The surface's headers plus any `X-Goog-Upload-*` header the browser announced (the family is open-ended).
    private func allowHeaders(_ declared: [String], for requested: String?) -> String {
        var list = declared
        for name in (requested ?? "").bytesSplit(separator: UInt8(ascii: ",")) {
            let header = name.trimmingSpaces()
            guard header.lowercased().hasPrefix("x-goog-upload-"),
                !list.contains(where: { $0.bytesEqualIgnoringASCIICase(header) }),
                header.utf8.allSatisfy({
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D
                })
            else { continue }
            list.append(header)
        }
        return list.joined(separator: ", ")
    }
}
