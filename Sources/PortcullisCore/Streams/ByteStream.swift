/// A pull-based stream of bytes: the one body abstraction shared by the HTTP server, storage backends and the
/// upstream client.
///
/// Backpressure is built in: a producer makes progress only when its consumer asks for the next chunk, so a
/// slow client socket slows an upstream download, and a handler that stops reading stops the socket reads.
///
/// Contract: exactly one consumer, which never calls `next` concurrently with itself. After `next` returns nil
/// or throws, the stream is finished. `cancel()` may be called from any thread at any time (also after the
/// end); it releases what the producer holds, and a pending or later `next` throws `ByteStreamError.cancelled`.
public protocol ByteStream: AnyObject, Sendable {
    /// The next chunk — never empty, at most `maxLength` bytes — or nil at a clean end of the stream.
    func next(maxLength: Int) async throws -> [UInt8]?
    /// Chunks in stream order — at least one, none empty, together at most `maxLength` bytes — or nil at a
    /// clean end: as much as the producer has ready, for a consumer that takes bytes in bulk (an upload's
    /// batches) and would otherwise cross a thread hand-off per chunk. Same contract as `next` (the two are
    /// never called concurrently). The default is one `next`.
    func nextPieces(maxLength: Int) async throws -> [[UInt8]]?
    /// Total bytes the stream will produce, when known up front (a `Content-Length`, an object size).
    var expectedLength: Int64? { get }
    /// Abandons the stream: the producer aborts (closes a socket, stops an upstream transfer).
    func cancel()
}

/// Errors any stream may throw, beside producer-specific ones.
public enum ByteStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    case cancelled
    /// The producer ended before `expectedLength` bytes (client hung up mid-body, upstream cut the transfer).
    case truncated(expected: Int64, received: Int64)
    /// More bytes arrived than the consumer allows (body size limits).
    case limitExceeded(limit: Int64)
    /// No bytes arrived within the read timeout.
    case timedOut

    public var description: String {
        switch self {
        case .cancelled: "stream cancelled"
        case .truncated(let expected, let received): "stream ended after \(received) of \(expected) bytes"
        case .limitExceeded(let limit): "stream exceeded the limit of \(limit) bytes"
        case .timedOut: "timed out waiting for body bytes"
        }
    }
}

extension ByteStream {
    public func nextPieces(maxLength: Int) async throws -> [[UInt8]]? {
        try await next(maxLength: maxLength).map { [$0] }
    }

    /// Reads the rest of the stream into memory, refusing more than `limit` bytes. Only for bodies that are
    /// small by contract (JSON requests); object bodies are never collected.
    public func collect(limit: Int) async throws -> [UInt8] {
        var result = [UInt8]()
        if let expected = expectedLength {
            guard expected <= Int64(limit) else { cancel(); throw ByteStreamError.limitExceeded(limit: Int64(limit)) }
            result.reserveCapacity(Int(expected))
        }
        while let chunk = try await next(maxLength: 64 * 1024) {
            guard result.count + chunk.count <= limit else {
                cancel()
                throw ByteStreamError.limitExceeded(limit: Int64(limit))
            }
            result.append(contentsOf: chunk)
        }
        return result
    }

    /// Reads and discards the rest of the stream (to keep a connection reusable after an early answer).
    public func drain() async throws {
        while try await next(maxLength: 64 * 1024) != nil {}
    }
}
