/// The Firebase Storage error codes, with the numeric values the iOS SDK uses (so logs read the same).
public enum StorageErrorCode: Int, Sendable, CaseIterable {
    case unknown = -13000
    case objectNotFound = -13010
    case bucketNotFound = -13011
    case projectNotFound = -13012
    case quotaExceeded = -13013
    case unauthenticated = -13020
    case unauthorized = -13021
    case retryLimitExceeded = -13030
    case nonMatchingChecksum = -13031
    case downloadSizeExceeded = -13032
    case cancelled = -13040
    case invalidArgument = -13050

    /// The code for an HTTP error status, as the Firebase SDKs map it (as the iOS SDK maps it).
    public static func from(httpStatus: Int) -> StorageErrorCode {
        switch httpStatus {
        case 401: .unauthenticated
        case 402: .quotaExceeded
        case 403: .unauthorized
        case 404: .objectNotFound
        default: .unknown
        }
    }
}

/// A failed storage call: the code callers switch on, plus what the server said.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public let code: StorageErrorCode
    public let message: String
    /// The HTTP status when the error came from the server.
    public let httpStatus: Int?
    /// The server's error body (its JSON `message` is already in `message`).
    public let serverResponse: String?

    public init(_ code: StorageErrorCode, _ message: String, httpStatus: Int? = nil, serverResponse: String? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.serverResponse = serverResponse
    }

    public var description: String {
        httpStatus.map { "\(code) (HTTP \($0)): \(message)" } ?? "\(code): \(message)"
    }

    static func cancelled() -> StorageError { StorageError(.cancelled, "The operation was cancelled.") }
}
