public import HTTPServer
import PortcullisCore
public import Service

/// The v0 error shape (v0 §6.1): `{"error":{"code":<status>,"message":"…"}}`, plus the resumable protocol's
/// `X-Goog-Upload-Status` (and `X-Goog-Upload-Size-Received` for a refused offset) on upload-URL errors, so
/// clients know whether they may resume (§5.9, §6.3).
public struct V0ErrorShape: ErrorShape {
    public init() {}

    public func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        var response = PlainErrorShape().response(for: error, requestID: requestID)
        if let upload = error.details.upload { response.headers.add("X-Goog-Upload-Status", upload.rawValue) }
        if let persisted = error.details.persistedBytes {
            response.headers.add("X-Goog-Upload-Size-Received", String(persisted))
        }
        return response
    }
}
