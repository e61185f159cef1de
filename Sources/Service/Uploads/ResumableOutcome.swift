import PortcullisCore

/// What a chunk sent to a resumable upload did. A chunk at the wrong offset is an outcome, not a failure: the
/// client is told what is stored and resumes from there.
public enum AppendOutcome: Sendable, Equatable {
    /// The chunk is stored; the upload now holds this many bytes.
    case stored(Int64)
    /// The chunk was not sent where the upload ends: nothing was stored; the upload holds `persisted` bytes.
    case offsetMismatch(persisted: Int64)
}

/// A request against a resumable upload that failed, and where the upload stands after it, so each surface can
/// tell its client whether to resume (v0's `X-Goog-Upload-Status`, the JSON API's 308).
public struct ResumableFailure: Error, Sendable, CustomStringConvertible {
    /// Where the upload stands after the failure.
    public enum Standing: Sendable, Equatable {
        /// Still accepting chunks: the client may query and resume.
        case open
        /// Committed, or refused for good (rules, checksum, precondition): nothing more will be accepted.
        case finished
        /// Cancelled by its client.
        case cancelled
    }

    /// The failure itself, as for any other request.
    public let error: ServiceError
    /// Nil when it is not known: the upload is unknown or expired, or its state could not be read.
    public let standing: Standing?
    /// The bytes the upload holds, when the request failed because it disagreed with them (a finalize of a
    /// size the staging does not hold).
    public let persisted: Int64?

    public init(_ error: ServiceError, standing: Standing?, persisted: Int64? = nil) {
        self.error = error
        self.standing = standing
        self.persisted = persisted
    }

    public var description: String { error.description }
}
