import PortcullisCore
import Testing

@Suite struct MarkupEscapingTests {
    @Test func theFiveCharactersOfMarkupAreEntitiesAndTheRestStays() {
        #expect(MarkupEscaping.escaped(#"a&b<c>d"e'f é"#) == "a&amp;b&lt;c&gt;d&quot;e'f é")
        #expect(MarkupEscaping.escaped("\"etag-1\"") == "&quot;etag-1&quot;")
        #expect(MarkupEscaping.escaped("") == "")
    }
}
