import Testing

@testable import Rules

@Suite struct RegexTests {
    func whole(_ pattern: String, _ input: String) -> Bool? {
        guard case .success(let r) = CompiledRegex.compile(pattern) else { return nil }
        return r.wholeMatch(input)
    }

    @Test(arguments: [
        ("abc", "abc", true), ("abc", "abcd", false), ("a.c", "abc", true), ("a.c", "a\nc", false),
        ("(?s)a.c", "a\nc", true),
        ("a*", "", true), ("a+", "", false), ("a?b", "b", true), ("a{2,3}", "aaa", true), ("a{2,3}", "aaaa", false),
        ("a{2}", "aa", true), ("a{2,}", "aaaaa", true), ("a{,2}", "a{,2}", true), ("x{", "x{", true),
        ("[a-c]+", "abcab", true), ("[^a-c]", "d", true), ("[^a-c]", "a", false), ("[\\d_]+", "1_2", true),
        ("\\w+@\\w+\\.com", "me@x.com", true), ("\\s", " ", true), ("\\S+", "ab", true), ("\\D", "5", false),
        ("cat|dog", "dog", true), ("(cat|dog)s", "cats", true), ("(?:ab)+", "abab", true), ("(?P<n>a)b", "ab", true),
        ("(?<n>a)b", "ab", true), ("(?i)abc", "ABC", true), ("a(?i)bc", "aBC", true), ("a(?i:b)c", "aBc", true),
        ("a(?i:b)c", "aBC", false), ("[[:alpha:]]+", "abZ", true), ("[[:^digit:]]", "5", false), ("\\.", ".", true),
        ("\\x41\\x{42}", "AB", true), ("\\101", "A", true), ("\\Qa.b\\E", "a.b", true), ("\\Qa.b\\E", "axb", false),
        ("^abc$", "abc", true), ("\\Aabc\\z", "abc", true), ("a\\bb", "ab", false), ("a\\b b", "a b", true),
        ("é+", "ééé", true), ("[é-ë]", "ê", true), ("(a|ab)(c|bcd)", "abcd", true), ("(a*)*b", "aaab", true),
        ("\\pL+", "aÄж", true), ("\\p{Lu}\\p{Ll}+", "Émile", true), ("\\p{Lu}", "é", false), ("\\PL", "1", true),
        ("[\\p{N}_]+", "١٢_3", true), ("[^\\p{L}]", "x", false), ("\\p{^L}", "5", true), ("[\\P{L}x]+", "x1", true),
        ("[]a]", "]", true), ("[a-]", "-", true), ("a*?", "aa", true), ("image/.*", "image/svg+xml", true),
    ])
    func wholeStringMatching(_ pattern: String, _ input: String, _ expected: Bool) {
        #expect(whole(pattern, input) == expected, "\(pattern) on \(input)")
    }

    @Test(arguments: [
        "(a)\\1", "a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b", "(?>a)", "a*+", "a++", "a**", "*a", "+", "?", "(a", "a)",
        "[a",
        "[z-a]", "\\", "\\8", "a{1001}", "\\p{Greek}", "\\Z", "(?#c)", "(?z)", "\\k", "x{2}{3}",
    ])
    func rejectsNonRE2Syntax(_ pattern: String) {
        if case .success = CompiledRegex.compile(pattern) { Issue.record("accepted \(pattern)") }
    }

    @Test func leftmostFirstForReplaceAndSplit() throws {
        let r = try CompiledRegex.compile("a|ab").get()
        #expect(r.replaceAll("abab", with: "X") == "XbXb")
        let lazy = try CompiledRegex.compile("<.+?>").get()
        #expect(lazy.replaceAll("<a><b>", with: "") == "")
        let greedy = try CompiledRegex.compile("<.+>").get()
        #expect(greedy.replaceAll("x<a><b>y", with: "") == "xy")
        #expect(try CompiledRegex.compile(",").get().split("a,b,c") == ["a", "b", "c"])
        #expect(try CompiledRegex.compile("^").get().split("ab") == ["ab"])
        // Java/RE2J semantics: an empty match right after a match still splits.
        #expect(try CompiledRegex.compile(" *").get().split("a b") == ["a", "", "b"])
    }

    @Test func pathologicalPatternsStayLinear() throws {
        let r = try CompiledRegex.compile("(a*)*(a*)*(a*)*b").get()
        let input = String(repeating: "a", count: 5_000)
        let start = ContinuousClock.now
        #expect(r.wholeMatch(input) == false)
        #expect(ContinuousClock.now - start < .seconds(5))
        // Work beyond the bound is refused instead of run.
        let big = try CompiledRegex.compile("(a{1000}){10}").get()
        #expect(big.wholeMatch(String(repeating: "a", count: 10_000)) == nil)
    }
}
