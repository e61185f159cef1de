public import HTTPServer
import PortcullisCore
public import Service

/// The v0 error shape: `{"error":{"code":<status>,"message":"…"}}`, plus the resumable protocol's
/// `X-Goog-Upload-Status` (and `X-Goog-Upload-Size-Received` for a refused offset) on upload-URL errors, so
/// clients know whether they may resume.
public struct V0ErrorShape: ErrorShape {
    public init() {}

    public func response(for error: ServiceError, requestID: String?) -> HTTPResponse {
        PlainErrorShape().response(for: error, wording: Self.wording(error.details.subject), requestID: requestID)
    }

    /// Firebase's words for what a failure is about (nil: the error's own message). The rules' denials name the
    /// permission Firebase names (`get` is READ; `create`, `update` and `delete` are WRITE).
    static func wording(_ subject: ServiceError.Subject?) -> String? {
        switch subject {
        case .denied(.get)?: "Permission denied. No READ permission."
        case .denied(.list)?: "Permission denied. No LIST permission."
        case .denied(.create)?, .denied(.update)?, .denied(.delete)?: "Permission denied. No WRITE permission."
        case .noSuchObject?: "Not Found."
        case nil: nil
        }
    }

    public func response(for failure: ResumableFailure, requestID: String?) -> HTTPResponse {
        var response = response(for: failure.error, requestID: requestID)
        if let standing = failure.standing { response.headers.add("X-Goog-Upload-Status", Self.uploadStatus(standing)) }
        if let persisted = failure.persisted {
            response.headers.add("X-Goog-Upload-Size-Received", String(persisted))
        }
        return response
    }

    /// `X-Goog-Upload-Status` for where an upload stands.
    static func uploadStatus(_ standing: ResumableFailure.Standing) -> String {
        switch standing {
        case .open: "active"
        case .finished: "final"
        case .cancelled: "cancelled"
        }
    }

    /// A chunk sent at the wrong offset (nothing stored): 400 with what the upload holds, still active, so
    /// the client queries and resumes.
    static func offsetMismatch(persisted: Int64) -> ResumableFailure {
        ResumableFailure(
            .badRequest("Upload offset mismatch; \(persisted) bytes are persisted."), standing: .open,
            persisted: persisted)
    }
}
