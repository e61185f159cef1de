import PortcullisCore
import Testing

@Suite struct DecimalTextTests {
    @Test(arguments: [Int64.min, -1_000_000, -10, -9, -1, 0, 1, 9, 10, 99, 100, 1_234_567_890, Int64.max])
    func signedMatchesDescription(_ value: Int64) {
        var out: [UInt8] = [0x21]
        DecimalText.append(value, to: &out)
        #expect(out == [0x21] + Array(String(value).utf8))
    }

    @Test(arguments: [UInt64(0), 7, 10, 1_000_000_000_000_000_000, 10_000_000_000_000_000_000, UInt64.max])
    func unsignedMatchesDescription(_ value: UInt64) {
        var out: [UInt8] = []
        DecimalText.append(value, to: &out)
        #expect(out == Array(String(value).utf8))
    }

    /// Reading back agrees with `Int64(_: String)` on every spelling, overflow and stray byte included.
    @Test(arguments: [
        "0", "-0", "+0", "7", "+7", "-7", "00012", "1733306400123456", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "-9223372036854775809", "99999999999999999999", "", "+", "-", "--1", "+-1", "1-",
        " 1", "1 ", "1.0", "1e3", "0x10", "١٢", "12a",
    ])
    func readsAsInt64Does(_ text: String) {
        #expect(DecimalText.int64(text.utf8) == Int64(text), "\(text)")
        #expect(DecimalText.int64(Array(text.utf8)[...]) == Int64(text), "\(text)")
    }
}
