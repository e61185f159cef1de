public import PortcullisCore
public import Storage

/// Conversions from module errors: the status mapping of docs/operations.md lives here and nowhere else.
extension ServiceError {
    /// Storage failures. Retryable conditions get the statuses clients retry (502/503/504, which the Firebase SDKs retry).
    public init(_ error: StorageError) {
        switch error {
        case .notFound:
            self = .notFound()
        case .bucketNotFound(let bucket):
            self = .notFound("Bucket \(bucket) not found.")
        case .preconditionFailed:
            self = .preconditionFailed()
        case .rangeNotSatisfiable(let size):
            var details = Details()
            details.objectSize = size
            self.init(.rangeNotSatisfiable, "Requested range not satisfiable.", details: details)
        case .checksumMismatch(let kind, let expected, let actual):
            // Cloud Storage's words for it.
            let what = kind == .md5 ? "MD5 hash" : "CRC32C"
            self = .badRequest("Provided \(what) \"\(expected)\" doesn't match calculated \(what) \"\(actual)\".")
        case .sizeMismatch(let expected, let actual):
            self = .badRequest("The upload has \(actual) bytes; \(expected) were declared.")
        case .offsetMismatch(let current):
            self = .badRequest("Upload offset mismatch; \(current) bytes are persisted.")
        case .bodyFailed(let underlying):
            self.init(bodyError: underlying)
        case .rejected(let underlying):
            if let serviceError = underlying as? ServiceError {
                self = serviceError
            } else {
                self = .denied(.create)
            }
        case .unavailable(let reason, let retryAfter):
            self = .unavailable("Storage is unavailable: \(reason)", retryAfter: retryAfter ?? 1)
        case .timedOut(let what):
            self.init(.gatewayTimeout, "Storage timed out: \(what)")
        case .upstreamDenied(let what):
            self.init(.badGateway, "The storage upstream refused the gateway's credentials: \(what)")
        case .invalidArgument(let what):
            self = .badRequest(what)
        case .conflict(let what):
            self.init(.conflict, what)
        case .internalError:
            self = .internalError()
        }
    }

    /// Request-body stream failures: a body over the size ceiling is 413, a body cut short 400, a stalled one
    /// 408, a client that went away 499 (only the access log ever sees it).
    public init(bodyError error: any Error) {
        if let serviceError = error as? ServiceError { self = serviceError; return }
        if let storageError = error as? StorageError { self.init(storageError); return }
        if let malformed = error as? any MalformedBody { self = .badRequest(malformed.description); return }
        switch error as? ByteStreamError {
        case .limitExceeded(let limit)?:
            self = .payloadTooLarge(limit: limit)
        case .truncated(let expected, let received)?:
            self = .badRequest("The request body ended after \(received) of \(expected) bytes.")
        case .timedOut?:
            self.init(.requestTimeout, "Timed out waiting for the request body.")
        case .cancelled?:
            self.init(.clientClosed, "The client closed the request.")
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
        case .expired: self = .forbidden("The capability has expired.")
        }
    }

    /// Any error that reached the top of an operation.
    public init(any error: any Error) {
        switch error {
        case let e as ServiceError: self = e
        case let e as ResumableFailure: self = e.error
        case let e as StorageError: self.init(e)
        case let e as JSONParseError: self.init(e)
        case let e as ObjectPathError: self.init(e)
        case let e as CapabilityError: self.init(e)
        default: self.init(bodyError: error)
        }
    }
}

/// A body stream failure that means the client sent a malformed body (a surface's envelope parser, e.g. a
/// multipart reader, failing while the backend pulls the bytes): 400 with the parser's own description.
public protocol MalformedBody: Error, CustomStringConvertible {}
