import PortcullisCore
import Synchronization

/// The request body of one aligned resumable-chunk PUT: the upload's held-back tail, then exactly `forward`
/// bytes of the client's chunk. Before it hands out the last forwarded byte it reads the chunk's remaining
/// `restCount` bytes (less than 256 KiB, the next tail) into memory, so a client body that fails anywhere —
/// also after the aligned part — fails this PUT before it completes, and GCS commits none of it.
///
/// Never reads past the chunk: every pull from `body` is bounded by what is still owed. Every byte taken from
/// `body` (not the prefix, already counted) goes into the running checksum.
final class GCSChunkStream: ByteStream {
    private struct State {
        var prefix: [UInt8]
        var prefixOffset = 0
        var forwarded: Int64 = 0
        var rest: [UInt8] = []
        var checksum: GCSRunningChecksum
    }

    private let state: Mutex<State>
    private let body: any ByteStream
    private let forward: Int64
    private let restCount: Int
    let expectedLength: Int64?

    init(prefix: [UInt8], body: any ByteStream, forward: Int64, restCount: Int, checksum: GCSRunningChecksum) {
        state = Mutex(State(prefix: prefix, checksum: checksum))
        self.body = body
        self.forward = forward
        self.restCount = restCount
        expectedLength = Int64(prefix.count) + forward
    }

    /// The chunk's bytes after the forwarded part (complete once the stream has ended cleanly).
    var rest: [UInt8] { state.withLock { $0.rest } }
    /// The upload's checksum through the end of the chunk (complete once the stream has ended cleanly).
    var checksum: GCSRunningChecksum { state.withLock { $0.checksum } }

    func next(maxLength: Int) async throws -> [UInt8]? {
        let fromPrefix: [UInt8]? = state.withLock { s in
            guard s.prefixOffset < s.prefix.count else { return nil }
            let end = min(s.prefix.count, s.prefixOffset + maxLength)
            defer { s.prefixOffset = end }
            return Array(s.prefix[s.prefixOffset..<end])
        }
        if let fromPrefix { return fromPrefix }
        let forwarded = state.withLock { $0.forwarded }
        let owed = forward - forwarded
        guard owed > 0 else { return nil }
        guard let piece = try await body.next(maxLength: Int(min(Int64(maxLength), owed))) else {
            throw ByteStreamError.truncated(expected: forward + Int64(restCount), received: forwarded)
        }
        let total = forwarded + Int64(piece.count)
        state.withLock {
            $0.forwarded = total
            $0.checksum.update(piece)
        }
        if total == forward {
            // Hold the last piece until the rest of the chunk is safely in memory.
            var rest = [UInt8]()
            rest.reserveCapacity(restCount)
            while rest.count < restCount {
                guard let more = try await body.next(maxLength: restCount - rest.count) else {
                    throw ByteStreamError.truncated(
                        expected: forward + Int64(restCount),
                        received: forward + Int64(rest.count))
                }
                rest += more
            }
            state.withLock {
                $0.rest = rest
                $0.checksum.update(rest)
            }
        }
        return piece
    }

    func cancel() { body.cancel() }
}
