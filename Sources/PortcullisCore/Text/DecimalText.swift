/// Decimal integers appended as ASCII bytes, for the hot paths that build response heads, access-log lines and
/// metadata JSON directly in a byte buffer (no intermediate `String` per number).
public enum DecimalText {
    /// Appends `value` in decimal (`-` first when negative).
    @inlinable
    public static func append(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        append(value.magnitude, to: &out)
    }

    /// Appends `value` in decimal.
    @inlinable
    public static func append(_ value: UInt64, to out: inout [UInt8]) {
        var divisor: UInt64 = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(truncatingIfNeeded: 48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
