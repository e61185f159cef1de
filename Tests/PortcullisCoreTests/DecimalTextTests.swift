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
}
