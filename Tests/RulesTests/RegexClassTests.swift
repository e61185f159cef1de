import Testing

@testable import Rules

/// Character classes and case-insensitive matching, against RE2's documented semantics (what Firebase rules
/// run): `(?i)` folds by Unicode simple case folding *orbits* (`k`, `K` and KELVIN SIGN are one class; `s`, `S`
/// and LONG S are another), whatever the size of a class range; escapes work as range bounds.
@Suite struct RegexClassTests {
    func whole(_ pattern: String, _ input: String) -> Bool? {
        guard case .success(let r) = CompiledRegex.compile(pattern) else { return nil }
        return r.wholeMatch(input)
    }

    @Test(arguments: [
        // Orbits with three members: a literal, a class and a range all fold to the whole orbit.
        ("(?i)k", "\u{212A}", true), ("(?i)\u{212A}", "K", true), ("(?i)\u{212A}", "k", true),
        ("(?i)[k]", "\u{212A}", true), ("(?i)[j-l]", "\u{212A}", true),
        ("(?i)s", "\u{17F}", true), ("(?i)\u{17F}", "S", true), ("(?i)[r-t]+", "\u{17F}S", true),
        ("(?i)\u{B5}", "\u{3BC}", true), ("(?i)\u{3BC}", "\u{39C}", true), ("(?i)\u{39C}", "\u{B5}", true),
        ("(?i)\u{1C4}", "\u{1C5}", true), ("(?i)\u{1C6}", "\u{1C4}", true),  // Ǆ ǅ ǆ
        ("(?i)\u{3B8}", "\u{3D1}", true), ("(?i)\u{3F4}", "\u{3B8}", true),  // θ ϑ ϴ
        ("(?i)\u{DF}", "\u{1E9E}", true), ("(?i)\u{1E9E}", "\u{DF}", true),  // ß ẞ
        // Without (?i) nothing folds.
        ("k", "\u{212A}", false), ("[j-l]", "K", false),
        // Turkic dotted/dotless i have no simple folding: they are alone.
        ("(?i)i", "\u{131}", false), ("(?i)i", "\u{130}", false), ("(?i)\u{131}", "I", false),
        ("(?i)I", "i", true),
        // Negated classes exclude the whole orbit.
        ("(?i)[^k]", "\u{212A}", false), ("(?i)[^k]", "K", false), ("(?i)[^a-z]", "\u{17F}", false),
        ("(?i)[^a-z]", "1", true),
        // Ranges of any size fold: RE2 has no size limit on folding a class.
        ("(?i)[a-\\x{900}]", "A", true), ("(?i)[a-\\x{900}]", "\u{212A}", true),
        ("(?i)[\\x{100}-\\x{2000}]", "\u{FF}", true),
        ("(?i)[\\x{0}-\\x{60}]", "z", true), ("(?i)[^\\x{0}-\\x{60}]", "z", false),
        // Non-ASCII pairs inside classes and ranges.
        ("(?i)[à-þ]+", "ÀÉÎ", true), ("(?i)[а-я]+", "ПРИВЕТ", true), ("(?i)[α-ω]+", "ΣΊΣ", false),
        ("(?i)[α-ω]+", "ΣΣ", true),
    ])
    func caseInsensitiveClassesFoldWholeOrbits(_ pattern: String, _ input: String, _ expected: Bool) {
        #expect(
            whole(pattern, input) == expected,
            "\(pattern) on \(input.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test(arguments: [
        ("[\\x41-\\x43]+", "ABC", true), ("[\\x41-\\x43]", "D", false), ("[a-\\x{63}]+", "abc", true),
        ("[\\n-\\r]+", "\n\u{B}\u{C}\r", true), ("[\\t-\\n]", " ", false), ("[\\--/]+", "-./", true),
        ("[\\x{10000}-\\x{10FFFF}]", "\u{1F600}", true), ("[^\\x{0}-\\x{FFFF}]", "\u{1F600}", true),
        ("[^\\x{0}-\\x{FFFF}]", "\u{FFFF}", false),
    ])
    func escapesAsRangeBounds(_ pattern: String, _ input: String, _ expected: Bool) {
        #expect(whole(pattern, input) == expected, "\(pattern) on \(input)")
    }

    @Test(arguments: ["[a-\\d]", "[z-\\x{61}]", "[a-\\", "[\\x{61}-"])
    func badRangesAreRefused(_ pattern: String) {
        if case .success = CompiledRegex.compile(pattern) { Issue.record("accepted \(pattern)") }
    }

    @Test func foldingAHugeClassStaysCheap() throws {
        // Every scalar, case-insensitively: must compile fast and still match everything.
        let start = ContinuousClock.now
        let r = try CompiledRegex.compile("(?i)[\\x{0}-\\x{10FFFF}]+").get()
        #expect(r.wholeMatch("aZ\u{212A}\u{1F600}") == true)
        let negated = try CompiledRegex.compile("(?i)[^\\x{0}-\\x{10FFFF}]").get()
        #expect(negated.wholeMatch("a") == false)
        #expect(ContinuousClock.now - start < .seconds(2))
    }
}
