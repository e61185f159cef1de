import PortcullisCore
import Testing

@Suite struct ExactStringTests {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"

    @Test func canonicalEquivalentsAreDifferentIdentities() {
        #expect(composed == decomposed, "the premise: Swift's == follows canonical equivalence")
        #expect(!composed.bytesEqual(decomposed))
        #expect(composed.bytesEqual("caf\u{E9}"))
        #expect(ExactString(composed) != ExactString(decomposed))
        #expect(Set([ExactString(composed), ExactString(decomposed)]).count == 2)
        var table: [ExactString: Int] = [:]
        table[ExactString(composed)] = 1
        #expect(table[ExactString(decomposed)] == nil)
        #expect(table[ExactString(composed)] == 1)
    }

    @Test func orderingIsByBytes() {
        // U+00E9 (C3 A9) sorts after "e" + U+0301 (65 CC 81) by bytes.
        #expect(decomposed.bytesLess(than: composed))
        #expect(!composed.bytesLess(than: decomposed))
        #expect([ExactString(composed), ExactString(decomposed)].sorted().map(\.string)
            .elementsEqual([decomposed, composed]) { $0.bytesEqual($1) })
        #expect("a".bytesLess(than: "ab"))
        #expect(!"ab".bytesLess(than: "ab"))
    }

    @Test func optionalsAndSequences() {
        let none: String? = nil
        #expect(none.bytesEqual(nil as String?))
        #expect(!none.bytesEqual("x"))
        #expect(Optional(composed).bytesEqual(composed))
        #expect(!Optional(composed).bytesEqual(decomposed))
        #expect([composed, "x"].containsBytes(composed))
        #expect(![composed, "x"].containsBytes(decomposed))
        #expect(composed[...].bytesEqual(composed))
    }

    @Test func hashSeparatesConcatenations() {
        struct Pair: Hashable { let a: ExactString, b: ExactString }
        #expect(Set([Pair(a: "ab", b: "c"), Pair(a: "a", b: "bc")]).count == 2)
    }
}
