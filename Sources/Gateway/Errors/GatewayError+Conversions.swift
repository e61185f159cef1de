public import PortcullisCore
public import Storage
import HTTPServer

/// Conversions from module errors to protocol errors: the status mapping of v0 §6.2 and DESIGN §8 lives here
/// and nowhere else. Handlers throw module errors (or these conversions) and `V0API` renders them.
extension GatewayError {
    /// Storage failures. Retryable conditions get the statuses the SDKs retry (502/503/504, §6.3).
    public init(_ error: StorageError) {
        switch error {
        case .notFound:
            self = .notFound("Not Found.  Could not get object")
        case .bucketNotFound(let bucket):
            self = .notFound("Bucket \(bucket) not found.")
        case .preconditionFailed:
            self = .preconditionFailed()
        case .rangeNotSatisfiable(let size):
            self.init(status: 416, message: "Requested range not satisfiable.",
                      headers: [("Content-Range", "bytes */\(size)")])
        case .checksumMismatch(let expected, let actual):
            self = .badRequest("The MD5 hash of the data (\(actual)) does not match the declared md5Hash (\(expected)).")
        case .sizeMismatch(let expected, let actual):
            self = .badRequest("The upload has \(actual) bytes; \(expected) were declared.")
        case .offsetMismatch(let current):
            self.init(status: 400, message: "Upload offset mismatch; \(current) bytes are persisted.",
                      headers: [("X-Goog-Upload-Size-Received", String(current))])
        case .bodyFailed(let underlying):
            self.init(bodyError: underlying)
        case .rejected(let underlying):
            if let gatewayError = underlying as? GatewayError { self = gatewayError }
            else { self = .forbidden("Permission denied. No WRITE permission.") }
        case .unavailable(let reason, let retryAfter):
            self = .unavailable("Storage is unavailable: \(reason)", retryAfter: retryAfter ?? 1)
        case .timedOut(let what):
            self.init(status: 504, message: "Storage timed out: \(what)")
        case .upstreamDenied(let what):
            self.init(status: 502, message: "The storage upstream refused the gateway's credentials: \(what)")
        case .invalidArgument(let what):
            self = .badRequest(what)
        case .internalError:
            self = .internalError()
        }
    }

    /// Request-body stream failures: a body over the size ceiling is 413, a body cut short 400, a stalled one
    /// 408, a client that went away 499 (only the access log ever sees it).
    public init(bodyError error: any Error) {
        if let gatewayError = error as? GatewayError { self = gatewayError; return }
        if let storageError = error as? StorageError { self.init(storageError); return }
        if let multipartError = error as? MultipartError { self = .badRequest(multipartError.description); return }
        switch error as? ByteStreamError {
        case .limitExceeded(let limit)?:
            self = .payloadTooLarge(limit: limit)
        case .truncated(let expected, let received)?:
            self = .badRequest("The request body ended after \(received) of \(expected) bytes.")
        case .timedOut?:
            self.init(status: 408, message: "Timed out waiting for the request body.")
        case .cancelled?:
            self.init(status: 499, message: "The client closed the request.")
        case nil:
            self = .badRequest("The request body could not be read: \(error)")
        }
    }

    /// A JSON request body that does not parse.
    public init(_ error: JSONParseError) {
        self = .badRequest("Invalid JSON in the request body: \(error.description)")
    }

    /// An object or bucket name that is not acceptable.
    public init(_ error: ObjectPathError) {
        self = .badRequest("Invalid object name: \(error.description)")
    }

    /// Sealed capabilities (cursors, upload URLs, signed URLs) that do not open.
    public init(_ error: CapabilityError) {
        switch error {
        case .malformed: self = .badRequest("The token is malformed.")
        case .badSignature: self = .badRequest("The token's signature does not match.")
        case .unknownKey: self = .badRequest("The token was signed with a key that is no longer accepted.")
        case .mismatch(let what): self = .badRequest("The token does not belong to this request (\(what)).")
        case .expired: self = .forbidden("The signed URL has expired.")
        }
    }

    /// Any error that reached the top of a handler.
    public init(any error: any Error) {
        switch error {
        case let e as GatewayError: self = e
        case let e as StorageError: self.init(e)
        case let e as JSONParseError: self.init(e)
        case let e as ObjectPathError: self.init(e)
        case let e as CapabilityError: self.init(e)
        default: self.init(bodyError: error)
        }
    }

    /// The resumable-upload status header, attached to errors of upload-URL requests so clients know whether
    /// they may resume (§5.9, §6.3).
    func withUploadStatus(_ status: String) -> GatewayError {
        var copy = self
        copy.headers.removeAll { HTTPHeaders.equalsIgnoringCase($0.0, "X-Goog-Upload-Status") }
        copy.headers.append(("X-Goog-Upload-Status", status))
        return copy
    }
}

