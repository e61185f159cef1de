import PortcullisCore
import Testing

@Suite struct MarkupEscapingTests {
    @Test func theFourMarkupCharactersAreEntitiesAndTheRestStays() {
        #expect(MarkupEscaping.escaped(#"a&b<c>d"e'f é"#) == "a&amp;b&lt;c&gt;d&quot;e'f é")
        #expect(MarkupEscaping.escaped("\"etag-1\"") == "&quot;etag-1&quot;")
        #expect(MarkupEscaping.escaped("") == "")
    }

    /// A combining mark after a markup character, or a prepended mark before it, is one grapheme cluster with it.
    @Test(arguments: ["\u{301}", "\u{20DD}", "\u{FE0F}", "\u{200D}"])
    func markupGluedToAMarkIsStillEscaped(mark: String) {
        for (raw, entity) in [("<", "&lt;"), (">", "&gt;"), ("&", "&amp;"), ("\"", "&quot;")] {
            #expect(MarkupEscaping.escaped(raw + mark).utf8.elementsEqual((entity + mark).utf8))
            #expect(MarkupEscaping.escaped("\u{600}" + raw).utf8.elementsEqual(("\u{600}" + entity).utf8))
        }
        let injected = "x\u{600}</Key>\(mark)\u{600}<Key>fake</Key>\(mark)"
        let escaped = MarkupEscaping.escaped(injected)
        #expect(!escaped.utf8.contains(UInt8(ascii: "<")) && !escaped.utf8.contains(UInt8(ascii: ">")))
        #expect(
            escaped.utf8.elementsEqual(
                "x\u{600}&lt;/Key&gt;\(mark)\u{600}&lt;Key&gt;fake&lt;/Key&gt;\(mark)".utf8))
    }

    @Test func nonASCIITextPassesThroughByteForByte() {
        let text = "caf\u{e9} cafe\u{301} \u{212A} \u{1F600} \u{FFFE}"
        #expect(MarkupEscaping.escaped(text).utf8.elementsEqual(text.utf8))
    }
}
