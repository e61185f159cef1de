import PortcullisCore
import Testing

/// `matchGlob` semantics, as a table: every row is checked on the `String` and the UTF-8 entry points.
@Suite struct NameGlobTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let pattern: String
        let name: String
        let matches: Bool
        var testDescription: String { "\(pattern) \(matches ? "~" : "!~") \(name)" }
    }

    static func rows(_ pattern: String, _ matching: [String], not failing: [String] = []) -> [Row] {
        matching.map { Row(pattern: pattern, name: $0, matches: true) }
            + failing.map { Row(pattern: pattern, name: $0, matches: false) }
    }

    static let table: [Row] =
        rows("", [""], not: ["a"])
        + rows("a.txt", ["a.txt"], not: ["a.tx", "A.txt", "xa.txt"])
        // `*`: any run without `/`.
        + rows("*.txt", ["a.txt", ".txt"], not: ["d/a.txt", "a.txt/"])
        + rows("d/*", ["d/", "d/x"], not: ["d/x/y", "d"])
        // `**`: any run, `/` included.
        + rows("**.txt", ["a.txt", "d/e/a.txt"], not: ["a.txt.gz"])
        + rows("a/**", ["a/", "a/b/c"], not: ["a", "b/a/c"])
        + rows("**", ["", "a/b//c/"])
        // `/**/` also matches one `/`; `**/` at the start also matches nothing. Only a whole segment absorbs.
        + rows("a/**/b", ["a/b", "a//b", "a/x/b", "a/x/y/b"], not: ["ab", "a/xb", "a/x/yb"])
        + rows("**/x", ["x", "d/x", "d/e/x", "/x"], not: ["dx", "d/ex"])
        + rows("a**/b", ["a/b", "ax/b", "a/x/b"], not: ["ab", "axb"])
        + rows("a/**b", ["a/b", "a/xb", "a/x/b"], not: ["ab"])
        + rows("a/**/**/b", ["a/b", "a/x/b", "a/x/y/b"], not: ["a/xb", "ab"])
        + rows("a/**/*.jpg", ["a/p.jpg", "a/x/yp.jpg"], not: ["ap.jpg", "a/p.jpg/x"])
        + rows("***", ["a/b", ""])
        + rows("a/****/b", ["a/x/b", "a//b"], not: ["a/b"])
        // `?` and sets: one scalar, never `/`.
        + rows("a?c", ["abc", "a\u{E9}c"], not: ["a/c", "ac", "abbc"])
        + rows("[a-c]x", ["ax", "cx"], not: ["dx", "Ax"])
        + rows("[!a-c]x", ["dx", "\u{E9}x"], not: ["bx", "/x"])
        + rows("[^a]", ["b"], not: ["a", "/"])
        + rows("[]]", ["]"], not: ["a"])
        + rows("[!]]", ["a"], not: ["]"])
        + rows("[\\]a]", ["]", "a"], not: ["\\"])
        + rows("[a-]", ["a", "-"], not: ["b"])
        + rows("[/a]", ["a"], not: ["/"])
        + rows("[{]", ["{"], not: ["}"])
        // Escapes.
        + rows("\\*", ["*"], not: ["a", ""])
        + rows("\\{a,b\\}", ["{a,b}"], not: ["a"])
        + rows("a\\", ["a"], not: ["a\\"])
        + rows("a,b", ["a,b"], not: ["a", "b"])
        // Alternatives.
        + rows("{a,b}.txt", ["a.txt", "b.txt"], not: ["c.txt", "ab.txt", ".txt"])
        + rows("x{,y}", ["x", "xy"], not: ["y"])
        + rows("{}", [""], not: ["a"])
        + rows("{a,b}{c,d}", ["ac", "bd"], not: ["a", "cd"])
        + rows("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", ["acegikm", "bdfhjln"], not: ["abcdefg"])
        + rows("{,,}{a,}{,b}", ["", "a", "b", "ab"], not: ["ba"])
        + rows("d/{*.jpg,**/*.png}", ["d/a.jpg", "d/a.png", "d/x/y/a.png"], not: ["d/x/a.jpg"])
        + rows("*{*}", ["ab"], not: ["a/b"])
        // Inside braces: `\` escapes `,` and `}`, a set is read whole, `{` is a character.
        + rows("{a\\,b,c}", ["a,b", "c"], not: ["a", "b"])
        + rows("{\\}}", ["}"])
        + rows("{[,}]x,y}", [",x", "}x", "y"], not: ["x"])
        + rows("{a,{b}", ["a", "{b"], not: ["b"])
        // A `**` at an alternative's edge looks past the brace; one right after `}` does not.
        + rows("x/{**/a,b}", ["x/a", "x/y/z/a", "x/b"], not: ["x/ya", "xa"])
        + rows("{**/a,b}", ["a", "y/a", "b"], not: ["ya"])
        + rows("{a/**,b}/c", ["a/c", "a/x/c", "a//c", "b/c"], not: ["a/xc", "ac", "bc"])
        + rows("x/{**}/y", ["x/y", "x/p/y", "x/p/q/y"], not: ["xy", "x/py"])
        + rows("x/{**,q}/y", ["x/y", "x/q/y", "x/p/q/y"], not: ["x/qy"])
        + rows("x/{**}/{**}/y", ["x/y", "x/p/y", "x/p/q/y"], not: ["x/py"])
        + rows("{a/,b/}**/c", ["a/x/c", "b//c"], not: ["a/c", "b/c"])
        // Unicode scalars, never canonical equivalence.
        + rows("caf\u{E9}", ["caf\u{E9}"], not: ["cafe\u{301}"])
        + rows("caf??", ["cafe\u{301}"], not: ["caf\u{E9}"])
        + rows("[\u{E9}\u{1F600}]", ["\u{E9}", "\u{1F600}"], not: ["e\u{301}"])
        + rows("?", ["\u{1F600}", "\u{10FFFF}"], not: ["\u{1F1EB}\u{1F1F7}"])

    @Test(arguments: table) func matches(_ row: Row) throws {
        let glob = try NameGlob(row.pattern)
        #expect(glob.matches(row.name) == row.matches)
        #expect(glob.matches(utf8: Array(row.name.utf8)) == row.matches)
        #expect(glob.matches(utf8: Array(row.name.utf8)[...]) == row.matches, "a non-Array collection")
    }

    @Test func invalidUTF8NeverMatches() throws {
        let glob = try NameGlob("**")
        #expect(glob.matches(utf8: Array("a/b".utf8)))
        for bytes: [UInt8] in [
            [0xFF], [0x80], [0xC0, 0xAF], [0xC3], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF0, 0x9F, 0x98], [0x61, 0xE9, 0x62],
        ] {
            #expect(!glob.matches(utf8: bytes), "\(bytes)")
        }
        #expect(glob.matches(utf8: [0xF4, 0x8F, 0xBF, 0xBF]), "U+10FFFF")
        #expect(glob.matches(utf8: [0xEF, 0xBF, 0xBD]), "U+FFFD")
    }

    @Test func unbalancedPatternsAreRefused() {
        for (pattern, error): (String, NameGlob.Error) in [
            ("{a", .unbalanced("{")), ("a}", .unbalanced("}")), ("{a,b}}", .unbalanced("}")),
            ("{a\\}", .unbalanced("{")), ("{a\\", .unbalanced("{")), ("[a", .unbalanced("[")),
            ("[]", .unbalanced("[")), ("{[}", .unbalanced("[")), ("[b-a]", .unbalanced("range")),
        ] {
            #expect(throws: error, "\(pattern)") { try NameGlob(pattern) }
        }
    }

    @Test func sizeLimits() throws {
        let longest = String(repeating: "a", count: NameGlob.maxPatternBytes)
        _ = try NameGlob(longest)
        #expect(throws: NameGlob.Error.tooLong) { try NameGlob(longest + "a") }
        #expect(throws: NameGlob.Error.tooLong) {
            try NameGlob(String(repeating: "\u{E9}", count: NameGlob.maxPatternBytes / 2 + 1))
        }
        // Alternatives count over every group of the pattern.
        let most = "{" + String(repeating: ",", count: NameGlob.maxAlternatives - 1) + "}"
        #expect(try NameGlob(most).matches(""))
        #expect(throws: NameGlob.Error.tooManyAlternatives) { try NameGlob(most + "{a}") }
        #expect(throws: NameGlob.Error.tooManyAlternatives) {
            try NameGlob("{" + String(repeating: "a,", count: NameGlob.maxAlternatives) + "}")
        }
        let halves = "{" + String(repeating: "a,", count: 127) + "a}"
        _ = try NameGlob(halves + halves)
        #expect(throws: NameGlob.Error.tooManyAlternatives) { try NameGlob(halves + halves + "{a}") }
        #expect("\(NameGlob.Error.tooManyAlternatives)" == "matchGlob has more than 256 alternatives")
        #expect("\(NameGlob.Error.tooLong)" == "matchGlob is longer than 1024 bytes")
    }

    @Test func equalityIsByBytes() throws {
        #expect(try NameGlob("a*") == NameGlob("a*"))
        #expect(try NameGlob("caf\u{E9}") != NameGlob("cafe\u{301}"))
        #expect(try NameGlob("{a,b}").description == "{a,b}")
    }
}
