public import PortcullisCore
import Synchronization

/// A `ByteStream` of the decompressed bytes of another stream holding gzip data (RFC 1952) — what serving a
/// `Content-Encoding: gzip` object to a client that does not accept gzip needs (decompressive transcoding).
///
/// Memory is bounded whatever the compression ratio: the stream holds one source chunk (at most
/// `bufferBytes`), zlib's state (a 32 KiB window and about 10 KiB more) and one output buffer of `bufferBytes`;
/// each `next` returns at most `min(maxLength, bufferBytes)` bytes, so a small "zip bomb" expands only as fast
/// as the consumer reads. The source is read only when the output buffer could not be filled from what is
/// already in hand, so backpressure passes through.
///
/// Format: one or more gzip members back to back (`cat a.gz b.gz`, as `gzip -d` accepts), each checked against
/// its CRC-32 and length trailer. An empty source is an empty result. Anything else — bytes that are not gzip,
/// a damaged member, bytes after a member that do not start another one — ends the stream with
/// `GunzipError.corrupt`, and a source that ends inside a member with `GunzipError.truncated`; never a crash.
/// Output already returned before the damage was found was correct data up to that point.
///
/// `expectedLength` is nil: the decompressed size is not known up front (the gzip trailer's ISIZE comes last
/// and is modulo 2³²).
///
/// Threading: the `ByteStream` contract — one consumer, `next` never concurrent with itself; `cancel` from any
/// thread (it cancels the source too). The zlib state is touched only inside `next`, hence `@unchecked`.
public final class GunzipStream: ByteStream, @unchecked Sendable {
    /// The default size of the source reads and of the output buffer.
    public static let defaultBufferBytes = 64 * 1024

    private let source: any ByteStream
    /// Size of one source read and of the output buffer.
    let bufferBytes: Int
    private let cancelled = Atomic<Bool>(false)

    // Consumer-confined state.
    private let inflater = Inflater()
    private var output: [UInt8]
    private var input: [UInt8] = []
    private var inputOffset = 0
    private var sourceEnded = false
    private var finished = false
    /// Bytes of the current member have been fed to zlib (a source ending now is a truncation).
    private var inMember = false
    /// The current member's trailer was read; the next input byte starts another member.
    private var memberEnded = false
    /// The last inflate filled the output buffer, so zlib may hold more output without needing input.
    private var outputPending = false
    private var started = false

    /// Decompresses `source`, reading it `bufferBytes` at a time (at least 1 KiB).
    public init(_ source: any ByteStream, bufferBytes: Int = GunzipStream.defaultBufferBytes) {
        self.source = source
        self.bufferBytes = max(1024, bufferBytes)
        output = [UInt8](repeating: 0, count: self.bufferBytes)
    }

    public var expectedLength: Int64? { nil }

    public func next(maxLength: Int) async throws -> [UInt8]? {
        let room = min(max(1, maxLength), bufferBytes)
        while true {
            guard !cancelled.load(ordering: .acquiring) else { throw ByteStreamError.cancelled }
            if finished { return nil }
            if !started {
                try inflater.startMember()
                started = true
            }
            let available = input.count - inputOffset
            if memberEnded {
                guard available > 0 else {
                    if sourceEnded {
                        finished = true
                        return nil
                    }
                    try await refill()
                    continue
                }
                try inflater.startMember()
                memberEnded = false
                inMember = false
            }
            if available == 0 && !outputPending {
                if !sourceEnded {
                    try await refill()
                    continue
                }
                finished = true
                if inMember { throw GunzipError.truncated }
                return nil
            }
            let step = try inflateStep(room: room)
            inMember = inMember || step.consumed > 0
            memberEnded = step.memberEnded
            outputPending = !step.memberEnded && step.produced == room
            if step.produced > 0 { return Array(output[0..<step.produced]) }
        }
    }

    public func cancel() {
        cancelled.store(true, ordering: .releasing)
        source.cancel()
    }

    // MARK: - Consumer-side helpers

    /// Reads the next source chunk into `input` (or notes the source's end).
    private func refill() async throws {
        if let chunk = try await source.next(maxLength: bufferBytes) {
            input = chunk
        } else {
            input = []
            sourceEnded = true
        }
        inputOffset = 0
    }

    private func inflateStep(room: Int) throws(GunzipError) -> Inflater.Step {
        let offset = inputOffset
        let inflater = self.inflater
        let result = input.withUnsafeBytes { pending -> Result<Inflater.Step, GunzipError> in
            let rest = UnsafeRawBufferPointer(rebasing: pending[offset...])
            return output.withUnsafeMutableBytes { buffer in
                Result { () throws(GunzipError) in
                    try inflater.inflate(rest, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room]))
                }
            }
        }
        let step = try result.get()
        inputOffset += step.consumed
        if inputOffset == input.count {
            // Release the consumed chunk now rather than at the next refill.
            input = []
            inputOffset = 0
        }
        return step
    }
}
