public import PortcullisCore

/// An upload as the service sees it, whatever protocol carried it: where to, with what attributes and checks,
/// and what is known about the bytes before they arrive.
public struct UploadRequest: Sendable {
    public var object: ObjectPath
    /// The attributes to commit with (the surface has filled its protocol's defaults).
    public var attributes: ObjectAttributes
    /// The sizes the body may turn out to have, known before its bytes arrive (empty: unknown). More than one
    /// when the envelope leaves it open (a multipart body may or may not end with a CRLF).
    public var possibleSizes: [Int64]
    /// A client-declared MD5 (base64); a mismatch is 400 and nothing is committed.
    public var expectedMD5: String?
    /// A client-declared CRC32C (base64 of the big-endian value); same contract.
    public var expectedCRC32C: String?
    public var preconditions: Preconditions
    /// Mint a download token when the attributes carry none (Firebase semantics: every object uploaded through
    /// a Firebase surface has one).
    public var mintDownloadToken: Bool

    public init(
        object: ObjectPath, attributes: ObjectAttributes, possibleSizes: [Int64] = [],
        expectedMD5: String? = nil, expectedCRC32C: String? = nil, preconditions: Preconditions = .none,
        mintDownloadToken: Bool
    ) {
        self.object = object
        self.attributes = attributes
        self.possibleSizes = possibleSizes
        self.expectedMD5 = expectedMD5
        self.expectedCRC32C = expectedCRC32C
        self.preconditions = preconditions
        self.mintDownloadToken = mintDownloadToken
    }
}
