import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small structured logger: one record is one line, JSON for machines or `key=value` text for humans.
///
/// Both formats escape every string they write (`JSONValue.appendEscaped`, `LogText`): no line break that any
/// common line splitter knows, no control and no bidirectional control character reaches a line raw.
///
/// Front end (`Logger`) plus a one-method sink protocol, in the spirit of swift-log. Callers must never pass
/// secrets (tokens, keys, `token=` values) as field values; the access log redacts query strings itself.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var description: String { ["debug", "info", "warning", "error"][rawValue] }
    }

    public let sink: any LogSink
    public let minimumLevel: Level

    public init(sink: any LogSink, minimumLevel: Level = .info) {
        self.sink = sink
        self.minimumLevel = minimumLevel
    }

    /// A logger that drops everything (tests, libraries used without a host).
    public static let disabled = Logger(sink: DiscardingLogSink(), minimumLevel: .error)

    public func log(_ level: Level, _ message: String, _ fields: [(String, LogValue)] = []) {
        guard level >= minimumLevel else { return }
        sink.write(LogRecord(time: .now(), level: level, message: message, fields: fields))
    }

    public func debug(_ message: String, _ fields: [(String, LogValue)] = []) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [(String, LogValue)] = []) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [(String, LogValue)] = []) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [(String, LogValue)] = []) { log(.error, message, fields) }
}

/// One field value of a log record.
public enum LogValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
}

public struct LogRecord: Sendable {
    public let time: Timestamp
    public let level: Logger.Level
    public let message: String
    public let fields: [(String, LogValue)]
}

public protocol LogSink: Sendable {
    func write(_ record: LogRecord)
}

public struct DiscardingLogSink: LogSink {
    public init() {}
    public func write(_ record: LogRecord) {}
}

/// Output format of `StreamLogSink` (`--log-format`).
public enum LogFormat: String, Sendable, CaseIterable {
    case json, text
}

/// Writes each record as one line to a file descriptor (stderr by default), serialised by a lock so lines
/// from different threads never interleave.
public final class StreamLogSink: LogSink {
    private let descriptor: Int32
    private let format: LogFormat
    private let lock = Mutex<Void>(())

    public init(descriptor: Int32 = 2, format: LogFormat) {
        self.descriptor = descriptor
        self.format = format
    }

    public func write(_ record: LogRecord) {
        let line = Self.render(record, format: format)
        lock.withLock { _ in
            line.withUnsafeBufferPointer { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = writeToDescriptor(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if n <= 0 { if n < 0 && errno == EINTR { continue } else { break } }
                    offset += n
                }
            }
        }
    }

    /// One line (with trailing newline) in the given format.
    public static func render(_ record: LogRecord, format: LogFormat) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        switch format {
        case .json:
            out.append(contentsOf: #"{"time":""#.utf8)
            out.append(contentsOf: record.time.rfc3339Milliseconds.utf8)
            out.append(contentsOf: #"","level":""#.utf8)
            out.append(contentsOf: record.level.description.utf8)
            out.append(contentsOf: #"","msg":"#.utf8)
            JSONValue.encodeString(record.message, into: &out)
            for (key, value) in record.fields {
                out.append(UInt8(ascii: ","))
                JSONValue.encodeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                switch value {
                case .string(let s): JSONValue.encodeString(s, into: &out)
                case .int(let i): out.append(contentsOf: String(i).utf8)
                case .double(let d): JSONValue.double(d).encode(into: &out)
                case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
                case .null: out.append(contentsOf: "null".utf8)
                }
            }
            out.append(contentsOf: "}\n".utf8)
        case .text:
            // Message, keys and values escaped as `LogText` says: a record is one line whatever it carries.
            record.time.append(fractionDigits: 3, to: &out)
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: record.level.description.utf8)
            out.append(UInt8(ascii: " "))
            LogText.appendEscaped(record.message, into: &out)
            for (key, value) in record.fields {
                out.append(UInt8(ascii: " "))
                LogText.appendEscaped(key, into: &out)
                out.append(UInt8(ascii: "="))
                switch value {
                case .string(let s): LogText.appendValue(s, into: &out)
                case .int(let i): DecimalText.append(i, to: &out)
                case .double(let d): out.append(contentsOf: "\(d)".utf8)
                case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
                case .null: out.append(UInt8(ascii: "-"))
                }
            }
            out.append(0x0A)
        }
        return out
    }
}

/// `write(2)` from libc, whichever module provides it (Glibc or Darwin): inside `StreamLogSink.write(_:)` the bare
/// name `write` means the method itself.
private func writeToDescriptor(_ descriptor: Int32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
