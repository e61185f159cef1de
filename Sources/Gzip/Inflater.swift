internal import CZlib

/// One zlib inflate stream configured for gzip members: the only place that touches `z_stream`.
///
/// Not thread-safe: its owner (`GunzipStream`) calls it from one consumer at a time. The z_stream lives at a
/// fixed heap address (zlib keeps a back pointer to it in its internal state) and is released in `deinit`.
final class Inflater {
    /// What one `inflate` call did.
    struct Step {
        /// Input bytes consumed.
        var consumed: Int
        /// Output bytes written.
        var produced: Int
        /// The member's trailer was read and checked: the member is complete.
        var memberEnded: Bool
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private var initialized = false

    init() {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Prepares for the first member (lazily, so creating a stream cannot fail), or for the next member of a
    /// multi-member file once the previous one ended.
    func startMember() throws(GunzipError) {
        let code = initialized ? inflateReset(stream) : pc_inflate_init_gzip(stream)
        guard code == Z_OK else { throw .zlib(code: code, message: message(code)) }
        initialized = true
    }

    /// Inflates from `input` into `output` (either may be empty: with no input, zlib still flushes output it
    /// holds back when the last call filled the buffer).
    func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(GunzipError)
        -> Step
    {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        let code = CZlib.inflate(stream, Z_NO_FLUSH)
        let step = Step(
            consumed: input.count - Int(stream.pointee.avail_in),
            produced: output.count - Int(stream.pointee.avail_out), memberEnded: code == Z_STREAM_END)
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        switch code {
        case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
            // Z_BUF_ERROR: no progress was possible with this input and room; not an error in itself.
            return step
        case Z_DATA_ERROR, Z_NEED_DICT:
            throw .corrupt(message(code))
        default:
            throw .zlib(code: code, message: message(code))
        }
    }

    private func message(_ code: Int32) -> String {
        if let text = stream.pointee.msg { return String(cString: text) }
        return String(cString: zError(code))
    }
}
