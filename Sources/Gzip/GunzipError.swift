/// Why a gzip stream could not be decompressed (the one error type of the Gzip module). Errors of the source
/// stream pass through unchanged; cancellation is `ByteStreamError.cancelled`.
public enum GunzipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source ended inside a gzip member (a cut download, a partial file).
    case truncated
    /// Not gzip, or a damaged member: bad header, bad deflate data, CRC-32 or length mismatch in the trailer,
    /// or bytes after a member that do not start another one. Carries zlib's message for logs.
    case corrupt(String)
    /// zlib could not set up or run (out of memory, library version mismatch): not the data's fault.
    case zlib(code: Int32, message: String)

    public var description: String {
        switch self {
        case .truncated: "gzip stream ended inside a member"
        case .corrupt(let why): "corrupt gzip stream: \(why)"
        case .zlib(let code, let message): "zlib error \(code): \(message)"
        }
    }
}
