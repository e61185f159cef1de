public import PortcullisCore

/// A Cloud Storage JSON API request after routing: handlers work on this value, never on the raw path.
public enum JSONOperation: Sendable, Equatable {
    /// `GET /storage/v1/b?project=`.
    case listBuckets
    /// `GET /storage/v1/b/{bucket}`.
    case getBucket(String)
    /// `POST /storage/v1/b?project=`: create a bucket (its name is in the body).
    case insertBucket
    /// `PATCH /storage/v1/b/{bucket}` (merge) or `PUT` (`replace: true`): change a created bucket's settings.
    case changeBucket(String, replace: Bool)
    /// `DELETE /storage/v1/b/{bucket}`.
    case deleteBucket(String)
    /// `GET /storage/v1/b/{bucket}/o`.
    case listObjects(bucket: String)
    /// `GET /storage/v1/b/{bucket}/o/{object}` (`alt=json`).
    case getMetadata(ObjectPath)
    /// `GET …/o/{object}?alt=media`, or `GET /download/storage/v1/b/{bucket}/o/{object}`.
    case download(ObjectPath)
    /// `PATCH …/o/{object}`: merge.
    case patch(ObjectPath)
    /// `PUT …/o/{object}`: replace the writable fields.
    case update(ObjectPath)
    /// `DELETE …/o/{object}`.
    case delete(ObjectPath)
    /// `POST /upload/storage/v1/b/{bucket}/o?uploadType=media|multipart|resumable`.
    case upload(bucket: String, kind: UploadKind)
    /// `PUT|POST|DELETE /upload/storage/v1/b/{bucket}/o?upload_id=…`: a resumable session's chunk, status query
    /// or cancel.
    case resumable(bucket: String, uploadID: String)
    /// `POST …/o/{source}/copyTo/b/{bucket}/o/{destination}`, or `rewriteTo` (`rewrite: true`).
    case copy(source: ObjectPath, destination: ObjectPath, rewrite: Bool)
    /// `POST …/o/{destination}/compose`.
    case compose(ObjectPath)
    /// `POST …/o/{source}/moveTo/o/{destination}` (one bucket).
    case move(source: ObjectPath, destination: ObjectPath)

    public enum UploadKind: String, Sendable, Equatable {
        case media, multipart, resumable
    }

    /// The bucket the operation addresses (the destination's, for a copy).
    public var bucket: String? {
        switch self {
        case .listBuckets, .insertBucket: nil
        case .getBucket(let b), .changeBucket(let b, _), .deleteBucket(let b), .listObjects(let b), .upload(let b, _),
            .resumable(let b, _):
            b
        case .getMetadata(let p), .download(let p), .patch(let p), .update(let p), .delete(let p), .compose(let p):
            p.bucket
        case .copy(_, let destination, _), .move(_, let destination): destination.bucket
        }
    }

    /// The object name, when the operation names one up front.
    public var objectName: String? {
        switch self {
        case .getMetadata(let p), .download(let p), .patch(let p), .update(let p), .delete(let p), .compose(let p):
            p.name
        case .copy(_, let destination, _), .move(_, let destination): destination.name
        case .listBuckets, .getBucket, .insertBucket, .changeBucket, .deleteBucket, .listObjects, .upload,
            .resumable:
            nil
        }
    }
}
