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

    /// The hash feeds the hasher the same byte stream as hashing byte by byte (what a non-contiguous string
    /// falls back to), so equal texts hash alike whatever their storage.
    @Test func hashIsTheByteStream() {
        for text in ["", "a", composed, decomposed, String(repeating: "long name/", count: 20), "x\u{0}y"] {
            var whole = Hasher()
            ExactString(text).hash(into: &whole)
            var byByte = Hasher()
            for byte in text.utf8 { byByte.combine(byte) }
            byByte.combine(0xFF as UInt8)
            #expect(whole.finalize() == byByte.finalize(), "\(text.debugDescription)")
        }
    }

    @Test func bytesEqualAcrossStorage() {
        let long = String(repeating: "segment/", count: 16)
        #expect(long.bytesEqual(String(repeating: "segment/", count: 16)))
        #expect(!long.bytesEqual(String(repeating: "segment/", count: 15) + "segment-"))
        #expect(long.dropFirst(8).bytesEqual(String(repeating: "segment/", count: 15)))
        #expect(!"abc".bytesEqual("abd"))
        #expect("".bytesEqual(""))
        #expect(!"".bytesEqual("a"))
    }

    @Test func orderingIsByBytes() {
        // U+00E9 (C3 A9) sorts after "e" + U+0301 (65 CC 81) by bytes.
        #expect(decomposed.bytesLess(than: composed))
        #expect(!composed.bytesLess(than: decomposed))
        #expect(
            [ExactString(composed), ExactString(decomposed)].sorted().map(\.string)
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

    /// `String.hasPrefix`/`split` work on grapheme clusters: `"/"` + U+0301 is one cluster, so a name
    /// `"dir/\u{301}x"` neither "starts with" `"dir/"` nor splits there. The byte helpers do.
    @Test func prefixesSuffixesAndSplitsAreByBytes() {
        let name = "dir/\u{301}x"
        #expect(!name.hasPrefix("dir/"), "the premise")
        #expect(name.bytesHasPrefix("dir/"))
        #expect(!composed.bytesHasPrefix("cafe"))
        #expect(decomposed.bytesHasPrefix("cafe"))
        #expect("a\u{301}".bytesHasSuffix("\u{301}") && !"a\u{301}".bytesHasSuffix("a"))
        #expect(name.bytesSplit(separator: UInt8(ascii: "/")).count == 2)
        #expect("a,,b,".bytesSplit(separator: UInt8(ascii: ",")) == ["a", "b"])
    }

    @Test func exactDictionaryAccess() {
        var table = [composed: 1]
        #expect(table[decomposed] == 1, "the premise: String keys merge canonical equivalents")
        #expect(table[exactly: decomposed] == nil)
        #expect(table[exactly: composed] == 1)
        table[exactly: decomposed] = nil
        #expect(table.count == 1)
        table[exactly: decomposed] = 2
        #expect(table.count == 1 && table.keys.first!.bytesEqual(decomposed) && table[exactly: decomposed] == 2)
        #expect(![composed: "v"].bytesEqual([decomposed: "v"]))
        #expect(["k": "v"].bytesEqual(["k": "v"]))
        #expect(![composed].bytesEqual([decomposed]) && ["a", "b"].bytesEqual(["a", "b"]))
    }

    /// ASCII letters fold; nothing else does: not the other ASCII pairs one bit apart, not Unicode case mappings.
    @Test func asciiCaseFolding() {
        #expect("Content-Length".bytesEqualIgnoringASCIICase("content-LENGTH"))
        #expect("x-amz-meta-Ab".bytesEqualIgnoringASCIICase("X-AMZ-META-aB"[...]))
        #expect("".bytesEqualIgnoringASCIICase(""))
        #expect(!"etag".bytesEqualIgnoringASCIICase("etags"))
        #expect(!"@[\\]^".bytesEqualIgnoringASCIICase("`{|}~"), "0x40/0x60 and 0x5B-0x5E/0x7B-0x7E differ by 0x20")
        #expect(!"\u{212A}ey".bytesEqualIgnoringASCIICase("key"), "KELVIN SIGN lowercases to k, but is not k")
        #expect(!"\u{130}d".bytesEqualIgnoringASCIICase("id"))
        #expect(!"caf\u{E9}".bytesEqualIgnoringASCIICase("caf\u{C9}"), "no folding outside ASCII")
        #expect(!UInt8(ascii: "-").equalsIgnoringASCIICase(0x0D) && !UInt8(ascii: "/").equalsIgnoringASCIICase(0x0F))
        #expect(
            UInt8(ascii: "Z").equalsIgnoringASCIICase(UInt8(ascii: "z")) && !UInt8(0xC9).equalsIgnoringASCIICase(0xE9))
    }
}
