public import PortcullisCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes one access-log line per exchange (DESIGN §8), in JSON or text.
///
/// Lines go to `output` (stdout by default) whole, under a lock, so concurrent exchanges never interleave.
/// Redaction is this type's job: `redactedTarget` strips every query value that is not known to be harmless,
/// so tokens (`token=`), signatures and upload capabilities never reach the log.
public final class AccessLog: Sendable {
    public let format: LogFormat
    private let output: @Sendable ([UInt8]) -> Void

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

    public func write(_ entry: AccessLogEntry) {
        output(entry.rendered(format))
    }

    /// Query parameters whose values are safe and useful in a log line. Every other value becomes `REDACTED`
    /// (download tokens, signed-URL signatures, upload ids, page tokens, anything unknown).
    static let loggableQueryKeys: [[UInt8]] = [
        "alt", "name", "uploadType", "upload_protocol", "prefix", "delimiter", "maxResults", "ifGenerationMatch",
        "ifMetagenerationMatch", "ifGenerationNotMatch", "ifMetagenerationNotMatch", "create_token", "signedUrl",
        "generation",
    ].map { Array($0.utf8) }

    /// The request-target with every non-allow-listed query value replaced by `REDACTED`. Works on bytes, as
    /// the query parser does: a `&` followed by a combining mark is one `Character`, and splitting on
    /// Characters would log the secret after it as part of an allowed value.
    public static func redactedTarget(_ target: String) -> String {
        let bytes = target.utf8
        guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return target }
        var out = Array(bytes[...question])
        var first = true
        for pair in bytes[bytes.index(after: question)...].split(separator: UInt8(ascii: "&"),
                                                                   omittingEmptySubsequences: false) {
            if !first { out.append(UInt8(ascii: "&")) }
            first = false
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else {
                out += isLoggable(pair) ? Array(pair) : redacted
                continue
            }
            let key = pair[..<equals]
            out += key
            out.append(UInt8(ascii: "="))
            out += isLoggable(key) ? Array(pair[pair.index(after: equals)...]) : redacted
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let redacted = Array("REDACTED".utf8)

    private static func isLoggable(_ key: Substring.UTF8View.SubSequence) -> Bool {
        loggableQueryKeys.contains { $0.elementsEqual(key) }
    }
}
