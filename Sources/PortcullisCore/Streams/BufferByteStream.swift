import Synchronization

/// A stream over bytes already in memory (small bodies, tests).
public final class BufferByteStream: ByteStream {
    private let state: Mutex<(bytes: [UInt8], offset: Int, cancelled: Bool)>
    public let expectedLength: Int64?

    public init(_ bytes: [UInt8]) {
        state = Mutex((bytes, 0, false))
        expectedLength = Int64(bytes.count)
    }

    public convenience init(_ string: String) { self.init(Array(string.utf8)) }

    /// A stream with no bytes.
    public static func empty() -> BufferByteStream { BufferByteStream([]) }

    public func next(maxLength: Int) async throws -> [UInt8]? {
        try state.withLock { state in
            guard !state.cancelled else { throw ByteStreamError.cancelled }
            guard state.offset < state.bytes.count else { return nil }
            let end = min(state.bytes.count, state.offset + max(1, maxLength))
            defer { state.offset = end }
            return Array(state.bytes[state.offset..<end])
        }
    }

    public func cancel() { state.withLock { $0.cancelled = true } }
}

/// Wraps a stream and fails it once more than `limit` bytes have passed — the enforcement point for upload
/// size ceilings when no `Content-Length` announced the size.
public final class LimitedByteStream: ByteStream {
    private let base: any ByteStream
    private let limit: Int64
    private let seen = Mutex<Int64>(0)

    public init(_ base: any ByteStream, limit: Int64) {
        self.base = base
        self.limit = limit
    }

    public var expectedLength: Int64? { base.expectedLength }

    public func next(maxLength: Int) async throws -> [UInt8]? {
        guard let chunk = try await base.next(maxLength: maxLength) else { return nil }
        try count(chunk.count)
        return chunk
    }

    public func nextPieces(maxLength: Int) async throws -> [[UInt8]]? {
        guard let pieces = try await base.nextPieces(maxLength: maxLength) else { return nil }
        try count(pieces.reduce(0) { $0 + $1.count })
        return pieces
    }

    private func count(_ bytes: Int) throws {
        let total = seen.withLock { total in
            total += Int64(bytes)
            return total
        }
        if total > limit {
            base.cancel()
            throw ByteStreamError.limitExceeded(limit: limit)
        }
    }

    public func cancel() { base.cancel() }
}
