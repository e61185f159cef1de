/// Decimal integers appended as ASCII bytes, for the hot paths that build response heads, access-log lines and
/// metadata JSON directly in a byte buffer (no intermediate `String` per number), and read back from bytes.
public enum DecimalText {
    /// The integer `text` spells, as `Int64(_: String)` reads it: an optional sign, then one or more ASCII digits,
    /// nothing else; nil when it does not fit. For numbers that arrive as text in bytes (a GCS resource's int64s).
    /// Inlinable so it is specialised where it is called: generic over an unknown collection, every byte read
    /// through the collection's witness allocated a coroutine frame.
    @inlinable
    public static func int64(_ text: some Collection<UInt8>) -> Int64? {
        var bytes = text[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        guard !bytes.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int64(byte &- UInt8(ascii: "0"))
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowAgain) =
                negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflow, !overflowAgain else { return nil }
            value = next
        }
        return value
    }

    /// Appends `value` in decimal (`-` first when negative).
    @inlinable
    public static func append(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        append(value.magnitude, to: &out)
    }

    /// Appends `value` in decimal.
    ///
    /// Digits are produced low first into a stack buffer by constant division (a multiply), then appended in
    /// one go: dividing by a running power of ten cost ~40 hardware divisions for a 16-digit generation.
    @inlinable
    public static func append(_ value: UInt64, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(truncatingIfNeeded: 48 &+ value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var start = 20
            var rest = value
            while rest > 0 {
                start -= 1
                buffer[start] = UInt8(truncatingIfNeeded: 48 &+ rest % 10)
                rest /= 10
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }
}
