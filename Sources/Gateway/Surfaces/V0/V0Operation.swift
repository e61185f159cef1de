public import PortcullisCore

/// A v0 request after routing (docs/architecture.md): everything after the router works on this value, never on the raw
/// path or query string.
public enum Operation: Sendable, Equatable {
    /// `GET /o/{object}` (no `alt`, or `alt=json`).
    case getMetadata(ObjectPath)
    /// `GET /o/{object}?alt=media`.
    case download(ObjectPath)
    /// `GET /o/{object}?alt=downloadUrl` (gateway extension, README.md).
    case downloadURL(ObjectPath)
    /// `GET /o?prefix=…&delimiter=…`.
    case list(bucket: String)
    /// `PATCH /o/{object}`, or `PUT` with `X-HTTP-Method-Override: PATCH`.
    case updateMetadata(ObjectPath)
    /// `DELETE /o/{object}` (or `DELETE /o?name=` as pyrebase sends it).
    case delete(ObjectPath)
    /// `POST /o?name=` with the object bytes as the body.
    case uploadMedia(ObjectPath)
    /// `POST /o?name=` with a `multipart/related` body.
    case uploadMultipart(bucket: String, name: String, boundary: String)
    /// `POST /o?name=` with `X-Goog-Upload-Protocol: resumable` and command `start`.
    case resumableStart(bucket: String, name: String)
    /// Any request to an upload URL (`?upload_id=`): upload, finalize, query, cancel.
    case resumableContinue(bucket: String, uploadID: String)
    /// `POST /o/{object}?create_token=true` (admin).
    case createToken(ObjectPath)
    /// `POST /o/{object}?delete_token=T` (admin).
    case deleteToken(ObjectPath, token: String)
    /// `POST /o/{object}?signedUrl` with `{"method","expiresIn"}` (gateway extension, README.md).
    case signURL(ObjectPath)

    /// The bucket the operation addresses.
    public var bucket: String {
        switch self {
        case .getMetadata(let p), .download(let p), .downloadURL(let p), .updateMetadata(let p), .delete(let p),
            .uploadMedia(let p), .createToken(let p), .deleteToken(let p, _), .signURL(let p):
            p.bucket
        case .list(let b), .uploadMultipart(let b, _, _), .resumableStart(let b, _), .resumableContinue(let b, _):
            b
        }
    }

    /// The object name, when the operation names one up front.
    public var objectName: String? {
        switch self {
        case .getMetadata(let p), .download(let p), .downloadURL(let p), .updateMetadata(let p), .delete(let p),
            .uploadMedia(let p), .createToken(let p), .deleteToken(let p, _), .signURL(let p):
            p.name
        case .uploadMultipart(_, let n, _), .resumableStart(_, let n): n
        case .list, .resumableContinue: nil
        }
    }
}

/// The router's output: the operation plus what handlers still need from the request line.
public struct RoutedRequest: Sendable {
    public var operation: Operation
    public var query: QueryParameters
}
