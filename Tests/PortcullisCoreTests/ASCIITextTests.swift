import PortcullisCore
import Testing

/// Separators, quotes and whitespace found by bytes: each case puts a mark next to the ASCII character, which
/// makes one `Character` with it (`"=\u{301}"`, `"\u{600}:"`, `" \u{301}"`, CR LF).
@Suite struct ASCIITextTests {
    func scalars(_ text: String?) -> [UInt32]? { text.map { $0.unicodeScalars.map(\.value) } }

    @Test func splitsAtASeparatorWithAMarkOnEitherSide() {
        #expect("a,\u{301}b".bytesSplit(separator: UInt8(ascii: ",")).map(scalars) == [[0x61], [0x301, 0x62]])
        #expect("a\u{600},b".bytesSplit(separator: UInt8(ascii: ",")).map(scalars) == [[0x61, 0x600], [0x62]])
        #expect(
            "a,,b,".bytesSplit(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) == ["a", "", "b", ""])
        #expect("a.b.c.d.e".bytesSplit(separator: UInt8(ascii: "."), maxSplits: 2) == ["a", "b", "c.d.e"])
    }

    @Test func cutsAtTheFirstOrLastSeparator() {
        let cut = "name=\u{301}value=x".bytesCut(at: UInt8(ascii: "="))
        #expect(scalars(cut?.before) == scalars("name") && scalars(cut?.after) == scalars("\u{301}value=x"))
        let last = "bytes=0-\u{301}-99".bytesCut(at: UInt8(ascii: "-"), last: true)
        #expect(scalars(last?.before) == scalars("bytes=0-\u{301}") && last?.after == "99")
        #expect("host\u{600}:80".bytesCut(at: UInt8(ascii: ":")).map { scalars($0.before) } == scalars("host\u{600}"))
        #expect("no separator".bytesCut(at: UInt8(ascii: "=")) == nil)
        #expect("=".bytesCut(at: UInt8(ascii: "=")).map { [$0.before, $0.after] } == ["", ""])
    }

    @Test func removesAPrefixByItsBytes() {
        #expect(
            scalars("W/\u{301}\"1/1\"".bytesRemovingPrefix("W/")) == [0x301] + "\"1/1\"".unicodeScalars.map(\.value))
        #expect("max-age=60".bytesRemovingPrefix("max-age=") == "60" && "q=".bytesRemovingPrefix("q=") == "")
        #expect("W\u{301}/x".bytesRemovingPrefix("W/") == nil && "caf\u{E9}".bytesRemovingPrefix("cafe") == nil)
    }

    @Test func trimsASCIIWhitespaceButNoMark() {
        #expect(scalars(" \u{301}x\t".trimmingSpaces()) == [0x301, 0x78])
        #expect(scalars("x \u{301}".trimmingSpaces()) == [0x78, 0x20, 0x301])
        #expect(" 1.5\r\n".trimmingASCIIWhitespace() == "1.5" && " 1.5\r\n".trimmingSpaces() == "1.5\r\n")
        #expect(" \t ".trimmingSpaces().isEmpty && "".trimmingASCIIWhitespace().isEmpty)
        #expect("\"\"quoted\"".trimmingASCII { $0 == UInt8(ascii: "\"") } == "quoted")
        #expect(scalars("\u{A0}x\u{A0}".trimmingSpaces()) == [0xA0, 0x78, 0xA0], "only ASCII whitespace")
    }
}
