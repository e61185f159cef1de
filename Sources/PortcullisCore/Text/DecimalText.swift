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
