import Testing

@testable import PortcullisCore

/// `JSONValue.encodeString`/`appendEscaped`: what JSON texts and both log formats write for every class of
/// scalar that could break or reorder a line.
@Suite struct JSONStringEscapingTests {
    private static func escaped(_ s: String) -> String {
        var out = [UInt8]()
        JSONValue.appendEscaped(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Every scalar `str.splitlines()` (Python) breaks on, and the Unicode line terminators.
    static let lineBreaks: [UInt32] = [0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029]
    /// Unicode's Bidi_Control set.
    static let bidiControls: [UInt32] = [0x061C, 0x200E, 0x200F] + Array(0x202A...0x202E) + Array(0x2066...0x2069)

    /// The whole escaped set: C0, DEL, C1, LS, PS, the bidirectional controls, U+FEFF.
    static func isEscaped(_ value: UInt32) -> Bool {
        value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
            || bidiControls.contains(value) || value == 0xFEFF
    }

    @Test func shortEscapesForQuoteBackslashAndWhitespaceControls() {
        #expect(Self.escaped("\"\\\n\r\t") == #"\"\\\n\r\t"#)
    }

    @Test(arguments: Array(UInt32(0)..<0x20) + [0x7F] + Array(UInt32(0x80)...0x9F))
    func everyControlCharacterIsEscaped(_ value: UInt32) {
        let scalar = Unicode.Scalar(value)!
        let expected =
            switch value {
            case 0x0A: #"\n"#
            case 0x0D: #"\r"#
            case 0x09: #"\t"#
            default: Self.hex(value)
            }
        #expect(Self.escaped("a\(Character(scalar))b") == "a\(expected)b")
    }

    @Test(arguments: lineBreaks)
    func everyLineBreakIsEscaped(_ value: UInt32) {
        let text = Self.escaped("x\(Character(Unicode.Scalar(value)!))y")
        #expect(text.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) }, "\(text)")
        #expect(text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).count == 1)
    }

    @Test(arguments: [0x2028, 0x2029, 0xFEFF] + bidiControls)
    func separatorsBidiControlsAndByteOrderMarkAreEscaped(_ value: UInt32) {
        #expect(Self.escaped("<\(Character(Unicode.Scalar(value)!))>") == "<\(Self.hex(value))>")
    }

    /// The neighbours of every escaped range, and characters that look alike, stay raw.
    @Test(
        arguments: [
            0x20, 0x7E, 0xA0, 0xA9, 0xBF, 0xC0, 0xE9, 0x061B, 0x061D, 0x0600, 0x200B, 0x200C, 0x200D, 0x2027, 0x202F,
            0x2065, 0x206A, 0x2060, 0x00AD, 0xFEFE, 0xFF00, 0xFFFD, 0xFFFF, 0x1F600, 0xE0067, 0x10FFFF,
        ] as [UInt32])
    func othersStayRaw(_ value: UInt32) {
        let s = "a\(Character(Unicode.Scalar(value)!))b"
        #expect(Self.escaped(s) == s)
    }

    /// Exhaustive: a scalar is escaped exactly when it is in the set, and every string reads back unchanged.
    @Test func escapedExactlyTheSetAndRoundTrips() throws {
        var values = Array(UInt32(0)..<0xD800) + Array(UInt32(0xE000)...0xFFFF)
        values += stride(from: UInt32(0x10000), through: 0x10FFFF, by: 0x3FF).map { $0 }
        for value in values {
            let scalar = Unicode.Scalar(value)!
            let s = String(Character(scalar))
            let text = Self.escaped(s)
            let raw = text.unicodeScalars.contains(scalar)
            if Self.isEscaped(value) {
                guard !raw else {
                    Issue.record("U+\(String(value, radix: 16)) left raw")
                    continue
                }
            } else if !(value == 0x22 || value == 0x5C) && text != s {
                Issue.record("U+\(String(value, radix: 16)) escaped as \(text)")
            }
        }
        // One string holding the whole BMP, encoded and parsed back.
        var all = ""
        for value in values { all.unicodeScalars.append(Unicode.Scalar(value)!) }
        var out = [UInt8]()
        JSONValue.encodeString(all, into: &out)
        #expect(try JSONValue.parse(out) == .string(all))
    }

    /// Runs between escapes are copied whole, in order, at the start, middle and end of a value.
    @Test func runsAroundEscapesAreKept() {
        #expect(Self.escaped("") == "")
        #expect(Self.escaped("plain ascii") == "plain ascii")
        #expect(Self.escaped("\u{85}") == #"\u0085"#)
        #expect(Self.escaped("日本\u{2028}語\u{202E}txt.exe\u{FEFF}") == #"日本\u2028語\u202etxt.exe\ufeff"#)
        #expect(Self.escaped("\u{1B}[31mred\u{9B}0m") == #"\u001b[31mred\u009b0m"#)
        #expect(Self.escaped("é\u{80}\u{A0}") == "é\\u0080\u{A0}")
    }

    /// A value made of nothing but escaped scalars and text encodes to printable ASCII: no line break (Swift's
    /// `isNewline`: LF, VT, FF, CR, NEL, LS, PS) and nothing a terminal would interpret.
    @Test func noEncodedValueHoldsALineBreak() {
        var s = ""
        for value in Self.lineBreaks + Self.bidiControls + [0x7F, 0x9B, 0xFEFF] {
            s.unicodeScalars.append(Unicode.Scalar(value)!)
            s += "forged record"
        }
        var out = [UInt8]()
        JSONValue.encodeString(s, into: &out)
        let text = String(decoding: out, as: UTF8.self)
        #expect(!text.contains { $0.isNewline })
        #expect(text.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) })
    }
}
