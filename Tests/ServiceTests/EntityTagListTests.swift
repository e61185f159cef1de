import Service
import Testing

@Suite struct EntityTagListTests {
    @Test func listsAreCutAndTrimmedByBytes() {
        let list = EntityTagList(parsing: " \"1/1\" ,W/\"2/1\",\t*")
        #expect(list.any)
        #expect(list.tags.map(\.tag) == ["\"1/1\"", "\"2/1\""] && list.tags.map(\.weak) == [false, true])
    }

    /// A comma or a space with a combining mark after it is one `Character` with it; the list still splits there,
    /// and the mark stays part of the next tag (which then names no object).
    @Test func aMarkAfterACommaStillSeparates() {
        let list = EntityTagList(parsing: "\"1/1\",\u{301}\"2/1\", \u{301}W/\"3/1\"")
        #expect(!list.any)
        #expect(list.tags.count == 3)
        #expect(list.tags[0].tag == "\"1/1\"")
        #expect(list.tags[1].tag.unicodeScalars.map(\.value) == [0x301] + "\"2/1\"".unicodeScalars.map(\.value))
        #expect(!list.tags[2].weak && list.tags[2].tag.unicodeScalars.first?.value == 0x301)
    }
}
