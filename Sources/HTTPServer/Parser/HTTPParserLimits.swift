/// Size limits the request parser enforces, each with the status it answers when exceeded.
///
/// The defaults match what common servers accept (nginx, Go's net/http) and are what the gateway uses:
/// a request line of at most 8 KiB (else `414 URI Too Long`), a header block of at most 32 KiB and 100
/// fields (else `431 Request Header Fields Too Large`). Body size limits per route are the responder's job
/// (`LimitedByteStream`); `maxBodyBytes` is only the server-wide ceiling (`413 Content Too Large`).
public struct HTTPParserLimits: Sendable, Hashable {
    /// Longest request line (method, target, version; without the CRLF). Exceeding it answers 414.
    public var maxRequestLineBytes: Int
    /// Largest header block (every field line with its CRLF, plus the final CRLF). Exceeding it answers 431.
    public var maxHeaderBytes: Int
    /// Most header fields in one request. Exceeding it answers 431.
    public var maxHeaderFields: Int
    /// Longest chunk-size line of a chunked body, extensions included. Exceeding it answers 400.
    public var maxChunkLineBytes: Int
    /// Largest trailer section of a chunked body (trailer fields are validated, then discarded). Exceeding
    /// it answers 431.
    public var maxTrailerBytes: Int
    /// Largest request body the server accepts at all, declared or chunked. Exceeding it answers 413.
    public var maxBodyBytes: Int64

    public init(
        maxRequestLineBytes: Int = 8 * 1024,
        maxHeaderBytes: Int = 32 * 1024,
        maxHeaderFields: Int = 100,
        maxChunkLineBytes: Int = 4 * 1024,
        maxTrailerBytes: Int = 8 * 1024,
        maxBodyBytes: Int64 = 5 * 1024 * 1024 * 1024 * 1024
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderFields = maxHeaderFields
        self.maxChunkLineBytes = maxChunkLineBytes
        self.maxTrailerBytes = maxTrailerBytes
        self.maxBodyBytes = maxBodyBytes
    }
}
