public import HTTPServer
public import PortcullisCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Writes one access-log line per exchange (docs/operations.md), in JSON or text.
///
/// Lines of exchanges that end on an HTTP event loop are formatted into that loop's buffer and written with
/// one `write` at the end of the loop's turn (`ExchangeLoop.atEndOfTurn`): a busy loop writes the lines of a
/// whole batch of ready connections at once, an idle one writes each line as its exchange ends. A buffer
/// that reaches `flushThreshold` is written at once. So a crash loses at most the lines of the loop turn in
/// progress; a clean shutdown calls `flush()` after draining. Lines from elsewhere (no loop) are written
/// immediately. Lines go to `output` whole, never interleaved.
///
/// Redaction is this type's job: `redactedTarget` strips every query value that is not known to be harmless,
/// so tokens (`token=`), signatures and upload capabilities never reach the log.
public final class AccessLog: Sendable {
    public let format: LogFormat
    private let output: @Sendable ([UInt8]) -> Void
    private let buffers: [LoopBuffer] = (0..<LoopShard.capacity).map { _ in LoopBuffer() }

    /// A loop buffer this large is written without waiting for the end of the turn.
    static let flushThreshold = 64 * 1024

    /// One loop's pending lines. Its lock is taken by that loop for each line and at the end of its turn,
    /// and by `flush()`; it is never contended on the request path.
    private final class LoopBuffer: Sendable {
        let lines = Mutex<[UInt8]>([])
        // Keeps two loops' locks off one cache line.
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    }

    /// `output` gets whole lines (one or more, each ending in a newline), one call at a time per loop.
    public init(format: LogFormat, output: @escaping @Sendable ([UInt8]) -> Void) {
        self.format = format
        self.output = output
    }

    /// An access log writing to a file descriptor (1 = stdout).
    public convenience init(format: LogFormat, descriptor: Int32 = 1) {
        let lock = Mutex<Void>(())
        self.init(format: format) { line in
            lock.withLock { _ in
                line.withUnsafeBufferPointer { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let n = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 { break }
                        offset += n
                    }
                }
            }
        }
    }

    /// An access log that drops everything.
    public static let disabled = AccessLog(format: .json) { _ in }

    /// Logs `entry`. `loop`: the loop the exchange ended on (`ExchangeSummary.loop`); when the call runs on
    /// that loop's thread the line joins the loop's buffer, otherwise it is written at once.
    public func write(_ entry: AccessLogEntry, loop: ExchangeLoop? = nil) {
        guard let loop, let shard = loop.currentShard else {
            output(entry.rendered(format))
            return
        }
        let buffer = buffers[shard.index]
        let wasEmpty = buffer.lines.withLock { lines in
            let wasEmpty = lines.isEmpty
            entry.render(format, into: &lines)
            if lines.count >= Self.flushThreshold { writeOut(&lines) }
            return wasEmpty
        }
        if wasEmpty { _ = loop.atEndOfTurn { [self] in flush(buffer) } }
    }

    /// Writes every loop's pending lines now (at shutdown, after draining). Any thread.
    public func flush() {
        for buffer in buffers { flush(buffer) }
    }

    private func flush(_ buffer: LoopBuffer) {
        buffer.lines.withLock { writeOut(&$0) }
    }

    private func writeOut(_ lines: inout [UInt8]) {
        guard !lines.isEmpty else { return }
        output(lines)
        lines.removeAll(keepingCapacity: true)
    }

    /// Query parameters of the storage APIs whose values are safe and useful in a log line; surfaces declare
    /// theirs (`SurfaceTraits.loggableQueryKeys`), usually this list and a few of their own. Every other value
    /// becomes `REDACTED` (download tokens, signed-URL signatures, upload ids, page tokens, anything unknown).
    public static let storageQueryKeys: [String] = [
        "alt", "name", "uploadType", "upload_protocol", "prefix", "delimiter", "maxResults", "ifGenerationMatch",
        "ifMetagenerationMatch", "ifGenerationNotMatch", "ifMetagenerationNotMatch", "create_token", "signedUrl",
        "generation",
    ]

    /// The request-target with every non-allow-listed query value replaced by `REDACTED`. Works on bytes, as
    /// the query parser does: a `&` followed by a combining mark is one `Character`, and splitting on
    /// Characters would log the secret after it as part of an allowed value.
    public static func redactedTarget(_ target: String, keeping keys: [String] = storageQueryKeys) -> String {
        redactedTarget(target, keeping: keys.map { Array($0.utf8) })
    }

    /// `redactedTarget` with the keys as bytes (what `SurfaceTraits` keeps, so nothing is converted per request).
    static func redactedTarget(_ target: String, keeping keys: [[UInt8]]) -> String {
        target.withContiguousUTF8 { redaction($0, target, keys) }
    }

    private static func redaction(_ bytes: UnsafeBufferPointer<UInt8>, _ target: String, _ keys: [[UInt8]]) -> String {
        guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return target }
        func isLoggable(_ name: QueryPieces.Bytes) -> Bool {
            keys.contains { $0.count == name.count && $0.elementsEqual(name) }
        }
        // Loggable pieces are copied as they are, so everything before the first other piece is the target's
        // own bytes; most queries name only loggable keys (`alt=media`), and then the target is its own redaction.
        var pieces = QueryPieces(bytes[(question + 1)...])
        var out: [UInt8] = []
        while let piece = pieces.next() {
            let loggable = isLoggable(piece.name)
            if out.isEmpty {
                if loggable { continue }
                out.reserveCapacity(bytes.count)
                out += bytes[..<piece.name.startIndex]
            } else {
                out.append(UInt8(ascii: "&"))
            }
            guard let value = piece.value else {
                if loggable { out += piece.name } else { out += redacted }
                continue
            }
            out += piece.name
            out.append(UInt8(ascii: "="))
            if loggable { out += value } else { out += redacted }
        }
        return out.isEmpty ? target : String(decoding: out, as: UTF8.self)
    }

    private static let redacted = Array("REDACTED".utf8)
}
