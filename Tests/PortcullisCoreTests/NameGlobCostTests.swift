import PortcullisCore
import Testing

/// The cost of matching, counted in word operations where the matcher runs them (`matches(utf8:work:)`), never
/// timed: every name costs at most `(bytes + 1) × workPerScalar`, and `workPerScalar` is bounded by the limits.
@Suite struct NameGlobCostTests {
    /// A pattern, shown by its first bytes.
    struct Pattern: CustomTestStringConvertible, Sendable {
        let text: String
        init(_ text: String) { self.text = text }
        var testDescription: String { "\(text.prefix(24))… (\(text.utf8.count) bytes)" }
    }

    /// The costliest patterns the limits allow: as many states as bytes, with groups (so six passes a scalar),
    /// many alternatives times many `**`, chains of `/**/`.
    static let hostile: [Pattern] = [
        Pattern("{}" + String(repeating: "*?", count: 511)),
        Pattern("{,,,,,,,}{,,,,,,,}" + String(repeating: "**", count: 502) + "z"),
        Pattern("{" + String(repeating: ",", count: 255) + "}" + String(repeating: "**", count: 383)),
        Pattern(String(repeating: "{a,**}/", count: 128)),
        Pattern(String(repeating: "/**", count: 341) + "/"),
        Pattern(String(repeating: "[a-z]", count: 204)),
    ]

    static let names: [String] = [
        "", "a", String(repeating: "a", count: 1000), String(repeating: "ab/", count: 333) + "a",
        String(repeating: "/", count: 1000), String(repeating: "\u{E9}", count: 500),
        String(repeating: "z", count: 999),
    ]

    @Test func aPassCostsAtMostSeventeenWordsAndAScalarSixPasses() throws {
        for pattern in Self.hostile.map(\.text) {
            let glob = try NameGlob(pattern)
            #expect(pattern.utf8.count <= NameGlob.maxPatternBytes)
            #expect(glob.workPerScalar <= 6 * 17, "\(glob.workPerScalar) for \(pattern.prefix(20))…")
        }
        #expect(try NameGlob(Self.hostile[0].text).workPerScalar == 6 * 17, "1,025 states, with a group")
        #expect(try NameGlob(String(repeating: "?", count: 1024)).workPerScalar == 2 * 17, "no group: two passes")
        #expect(try NameGlob("**/*.jpg").workPerScalar == 2)
        #expect(try NameGlob("{photos,videos}/**/*.{jpg,png}").workPerScalar == 6)
    }

    @Test(arguments: hostile) func workIsLinearInTheName(_ pattern: Pattern) throws {
        let glob = try NameGlob(pattern.text)
        for name in Self.names {
            let bytes = Array(name.utf8)
            var work = 0
            let matched = glob.matches(utf8: bytes, work: &work)
            #expect(matched == glob.matches(utf8: bytes))
            #expect(work <= glob.matchCost(byteCount: bytes.count))
            #expect(work <= (bytes.count + 1) * 6 * 17)
        }
    }

    @Test func aNameThatKeepsTheAutomatonBusyCostsExactlyItsLength() throws {
        // Every scalar of these names keeps states alive to the end, so no early exit: the work is one setup and
        // one `workPerScalar` per scalar, whatever the alternatives (the 64 of this pattern cost no more than one).
        let glob = try NameGlob(Self.hostile[1].text)
        var setup = 0
        #expect(!glob.matches(utf8: [], work: &setup))
        #expect(setup > 0 && setup <= glob.workPerScalar)
        for count in [1, 10, 100, 1000] {
            var work = 0
            #expect(!glob.matches(utf8: Array(repeating: UInt8(ascii: "a"), count: count), work: &work))
            #expect(work == setup + count * glob.workPerScalar)
        }
        var work = 0
        #expect(glob.matches(utf8: Array("ab/c\u{E9}z".utf8), work: &work))
        #expect(work == setup + 6 * glob.workPerScalar, "per scalar, not per byte")
    }

    @Test func workAccumulatesAcrossNamesAndStopsWhenNothingCanMatch() throws {
        let glob = try NameGlob("a*")
        var setup = 0
        _ = glob.matches(utf8: [], work: &setup)
        var work = 0
        #expect(glob.matches(utf8: Array("abc".utf8), work: &work))
        #expect(glob.matches(utf8: Array("abc".utf8), work: &work))
        #expect(work == 2 * (setup + 3 * glob.workPerScalar))
        var early = 0
        #expect(!glob.matches(utf8: Array(String(repeating: "x", count: 1000).utf8), work: &early))
        #expect(early <= setup + glob.workPerScalar, "the first scalar leaves no state: the rest is not looked at")
    }
}
