/// A W3C Trace Context position (https://www.w3.org/TR/trace-context/): which trace a piece of work belongs to,
/// which span is its parent, whether the trace is sampled, and the caller's `tracestate`, forwarded unchanged.
///
/// A plain value: parsing, formatting and child ids allocate nothing but the header strings themselves, so the
/// request path can carry one whether or not spans are exported.
public struct TraceContext: Sendable, Equatable {
    /// The 16-byte trace id, as two big-endian halves (never both zero).
    public var traceIDHigh: UInt64
    public var traceIDLow: UInt64
    /// The 8-byte id of the span that is the parent of work handed this context (never zero).
    public var spanID: UInt64
    /// The `sampled` flag (bit 0 of `trace-flags`).
    public var sampled: Bool
    /// The caller's `tracestate`, forwarded verbatim (nil when none came or it was malformed).
    public var traceState: String?

    public init(traceIDHigh: UInt64, traceIDLow: UInt64, spanID: UInt64, sampled: Bool, traceState: String? = nil) {
        self.traceIDHigh = traceIDHigh
        self.traceIDLow = traceIDLow
        self.spanID = spanID
        self.sampled = sampled
        self.traceState = traceState
    }

    /// The context a `traceparent` header names, or nil when the header is absent or invalid.
    ///
    /// Accepted: version `00` with exactly 55 characters, or a later version (not `ff`) with at least 55 and a
    /// `-` after the flags when longer (the spec's forward compatibility); lower-case hex only; all-zero trace or
    /// parent ids are invalid. A `tracestate` is kept only beside a valid `traceparent`, and only when it is at
    /// most 512 bytes of printable ASCII (the spec's limit; longer ones may be dropped).
    public init?(traceparent: String?, tracestate: String? = nil) {
        guard let traceparent else { return nil }
        var header = traceparent
        guard var context = header.withUTF8({ Self.parse($0) }) else { return nil }
        if let tracestate, Self.isAcceptableTraceState(tracestate) { context.traceState = tracestate }
        self = context
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> TraceContext? {
        guard b.count >= 55, b[2] == 0x2D, b[35] == 0x2D, b[52] == 0x2D else { return nil }
        guard let version = hexValue(b, 0, 2), version != 0xFF else { return nil }
        if version == 0 {
            guard b.count == 55 else { return nil }
        } else if b.count > 55, b[55] != 0x2D {
            return nil
        }
        guard let high = hexValue(b, 3, 16), let low = hexValue(b, 19, 16), let span = hexValue(b, 36, 16),
            let flags = hexValue(b, 53, 2), high | low != 0, span != 0
        else { return nil }
        return TraceContext(traceIDHigh: high, traceIDLow: low, spanID: span, sampled: flags & 1 == 1)
    }

    /// `count` lower-case hex digits at `offset` as a number (count ≤ 16), or nil on any other byte.
    private static func hexValue(_ b: UnsafeBufferPointer<UInt8>, _ offset: Int, _ count: Int) -> UInt64? {
        var value: UInt64 = 0
        for i in offset..<(offset + count) {
            let c = b[i]
            let digit: UInt8
            switch c {
            case 0x30...0x39: digit = c - 0x30
            case 0x61...0x66: digit = c - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    private static func isAcceptableTraceState(_ value: String) -> Bool {
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= 512 else { return false }
        return bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// The 32 lower-case hex digits of the trace id (the access log's `trace_id`).
    public var traceIDHex: String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            Self.writeHex(traceIDHigh, into: buffer, at: 0)
            Self.writeHex(traceIDLow, into: buffer, at: 16)
            return 32
        }
    }

    /// The `traceparent` value naming `spanID` as the parent: what an outgoing request carries.
    public var traceparent: String {
        String(unsafeUninitializedCapacity: 55) { buffer in
            buffer[0] = 0x30
            buffer[1] = 0x30
            buffer[2] = 0x2D
            Self.writeHex(traceIDHigh, into: buffer, at: 3)
            Self.writeHex(traceIDLow, into: buffer, at: 19)
            buffer[35] = 0x2D
            Self.writeHex(spanID, into: buffer, at: 36)
            buffer[52] = 0x2D
            buffer[53] = 0x30
            buffer[54] = sampled ? 0x31 : 0x30
            return 55
        }
    }

    /// This context with `span` as the parent of what it is handed to next (same trace, flags and state).
    public func child(_ span: UInt64) -> TraceContext {
        var copy = self
        copy.spanID = span
        return copy
    }

    /// The headers that carry this context on an outgoing request: `traceparent`, and `tracestate` when set.
    public var headers: [(String, String)] {
        if let traceState { return [("traceparent", traceparent), ("tracestate", traceState)] }
        return [("traceparent", traceparent)]
    }

    static func writeHex(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        var v = value
        for i in stride(from: offset + 15, through: offset, by: -1) {
            let nibble = UInt8(truncatingIfNeeded: v & 0xF)
            buffer[i] = nibble < 10 ? 48 + nibble : 87 + nibble
            v >>= 4
        }
    }
}
