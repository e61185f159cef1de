import PortcullisCore
import Testing

/// The parser's fast paths (escape-free strings, short integers) agree with the general paths.
@Suite struct JSONParserFastPathTests {
    @Test func strings() throws {
        #expect(
            try JSONValue.parse(#"["plain", "caf\u00e9", "tab\there", "é日本", ""]"#)
                == .array([.string("plain"), .string("café"), .string("tab\there"), .string("é日本"), .string("")]))
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) }  // invalid UTF-8
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0x61, 0x0A, 0x22]) }  // raw newline
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#""unterminated"#) }
    }

    @Test func integers() throws {
        #expect(try JSONValue.parse("123456789012345678") == .int(123_456_789_012_345_678))
        #expect(try JSONValue.parse("-123456789012345678") == .int(-123_456_789_012_345_678))
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("0") == .int(0))
        #expect(try JSONValue.parse("-0") == .int(0))
        #expect(try JSONValue.parse("1.5e3") == .double(1500))
        #expect(throws: JSONParseError.self) { try JSONValue.parse("012") }
    }
}
