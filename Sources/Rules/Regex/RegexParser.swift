/// Why a pattern was refused: not valid RE2 syntax, or a feature RE2 deliberately lacks (backreferences,
/// lookaround, possessive/atomic groups), or too large.
struct RegexError: Error, Sendable {
    var message: String
}

/// Zero-width assertions.
enum RegexAssertion: Sendable {
    case beginText, endText, beginLine, endLine, wordBoundary, notWordBoundary
}

/// Parsed pattern tree.
indirect enum RegexNode {
    case empty
    case char(UInt32)
    /// Sorted, non-overlapping inclusive ranges.
    case set([ClosedRange<UInt32>])
    case any(matchesNewline: Bool)
    case concat([RegexNode])
    case alternate([RegexNode])
    case repeating(RegexNode, min: Int, max: Int?, greedy: Bool)
    case assertion(RegexAssertion)
    case unicodeClass(UnicodeClass)
}

/// `\p{Lu}`-style membership by Unicode general category.
struct UnicodeCategoryItem: Sendable {
    var categories: [Unicode.GeneralCategory]
    var negated: Bool
}

/// A character class that needs Unicode properties: code-point ranges plus category items, optionally negated.
struct UnicodeClass: Sendable {
    var ranges: [ClosedRange<UInt32>]
    var items: [UnicodeCategoryItem]
    var negated: Bool

    func contains(_ c: UInt32) -> Bool {
        var hit = ranges.contains { $0.contains(c) }
        if !hit, let u = Unicode.Scalar(c) {
            let category = u.properties.generalCategory
            hit = items.contains { $0.categories.contains(category) != $0.negated }
        }
        return hit != negated
    }

    static func categories(named name: String) -> [Unicode.GeneralCategory]? {
        let all: [(String, Unicode.GeneralCategory)] = [
            ("Lu", .uppercaseLetter), ("Ll", .lowercaseLetter), ("Lt", .titlecaseLetter), ("Lm", .modifierLetter),
            ("Lo", .otherLetter), ("Mn", .nonspacingMark), ("Mc", .spacingMark), ("Me", .enclosingMark),
            ("Nd", .decimalNumber), ("Nl", .letterNumber), ("No", .otherNumber), ("Pc", .connectorPunctuation),
            ("Pd", .dashPunctuation), ("Ps", .openPunctuation), ("Pe", .closePunctuation), ("Pi", .initialPunctuation),
            ("Pf", .finalPunctuation), ("Po", .otherPunctuation), ("Sm", .mathSymbol), ("Sc", .currencySymbol),
            ("Sk", .modifierSymbol), ("So", .otherSymbol), ("Zs", .spaceSeparator), ("Zl", .lineSeparator),
            ("Zp", .paragraphSeparator), ("Cc", .control), ("Cf", .format), ("Cs", .surrogate), ("Co", .privateUse),
            ("Cn", .unassigned),
        ]
        if name == "Any" { return all.map(\.1) }
        if name.count == 1 { let hits = all.filter { $0.0.hasPrefix(name) }.map(\.1); return hits.isEmpty ? nil : hits }
        return all.first { $0.0 == name }.map { [$0.1] }
    }
}

struct RegexFlags {
    var caseInsensitive = false
    var dotAll = false
    var multiline = false
    var ungreedy = false
}

/// Parser for the RE2 syntax subset used by rules (`matches`, `split`, `replace`).
struct RegexParser {
    let s: [UInt32]
    var i = 0
    var depth = 0
    static let maxRepeat = 1000
    static let maxDepth = 100

    init(_ pattern: String) { s = pattern.unicodeScalars.map(\.value) }

    func fail(_ message: String) -> RegexError { RegexError(message: message) }

    var atEnd: Bool { i >= s.count }
    func peek(_ k: Int = 0) -> UInt32? { i + k < s.count ? s[i + k] : nil }

    mutating func parse() throws(RegexError) -> RegexNode {
        var flags = RegexFlags()
        let node = try parseAlternation(&flags)
        if !atEnd { throw fail("unexpected ')'") }
        return node
    }

    mutating func parseAlternation(_ flags: inout RegexFlags) throws(RegexError) -> RegexNode {
        depth += 1
        defer { depth -= 1 }
        if depth > RegexParser.maxDepth { throw fail("pattern nested too deeply") }
        var branches = [try parseConcat(&flags)]
        while peek() == 0x7C {  // |
            i += 1
            branches.append(try parseConcat(&flags))
        }
        return branches.count == 1 ? branches[0] : .alternate(branches)
    }

    mutating func parseConcat(_ flags: inout RegexFlags) throws(RegexError) -> RegexNode {
        var items: [RegexNode] = []
        while let c = peek(), c != 0x7C, c != 0x29 {
            var atom: RegexNode
            switch c {
            case 0x28:  // (
                guard let a = try parseGroup(&flags) else { continue }
                atom = a
            case 0x2A, 0x2B, 0x3F:  // * + ?
                throw fail("missing argument to repetition operator: \(Character(Unicode.Scalar(c)!))")
            case 0x7B:  // { — literal unless it is a valid repeat, which would be missing its argument
                if repeatSpec(at: i) != nil { throw fail("missing argument to repetition operator: {") }
                i += 1
                atom = literal(c, flags)
            case 0x5B:
                atom = try parseClass(flags)
            case 0x2E:
                i += 1
                atom = .any(matchesNewline: flags.dotAll)
            case 0x5E:
                i += 1
                atom = .assertion(flags.multiline ? .beginLine : .beginText)
            case 0x24:
                i += 1
                atom = .assertion(flags.multiline ? .endLine : .endText)
            case 0x5C:
                atom = try parseEscape(flags)
            default:
                i += 1
                atom = literal(c, flags)
            }
            atom = try parseRepeats(atom, flags)
            items.append(atom)
        }
        if items.isEmpty { return .empty }
        return items.count == 1 ? items[0] : .concat(items)
    }

    /// `{n}`, `{n,}`, `{n,m}` at `start`, or nil when the text there is not a repeat (then `{` is literal).
    func repeatSpec(at start: Int) -> (min: Int, max: Int?, end: Int)? {
        var j = start
        guard j < s.count, s[j] == 0x7B else { return nil }
        j += 1
        func number() -> Int? {
            var v = 0, digits = 0
            while j < s.count, s[j] >= 0x30, s[j] <= 0x39 {
                v = min(v * 10 + Int(s[j] - 0x30), 100_000)
                digits += 1
                j += 1
            }
            return digits > 0 ? v : nil
        }
        guard let lo = number() else { return nil }
        var hi: Int? = lo
        if j < s.count, s[j] == 0x2C {
            j += 1
            hi = number()
        }
        guard j < s.count, s[j] == 0x7D else { return nil }
        return (lo, hi, j + 1)
    }

    mutating func parseRepeats(_ atom: RegexNode, _ flags: RegexFlags) throws(RegexError) -> RegexNode {
        var node = atom
        var repeated = false
        while let c = peek() {
            var lo = 0
            var hi: Int?
            switch c {
            case 0x2A: lo = 0; hi = nil; i += 1
            case 0x2B: lo = 1; hi = nil; i += 1
            case 0x3F: lo = 0; hi = 1; i += 1
            case 0x7B:
                guard let spec = repeatSpec(at: i) else { return node }
                lo = spec.min; hi = spec.max
                if lo > RegexParser.maxRepeat || (hi ?? 0) > RegexParser.maxRepeat {
                    throw fail("bad repetition operator: repeat count above \(RegexParser.maxRepeat)")
                }
                if let hi, hi < lo { throw fail("bad repetition operator: {\(lo),\(hi)}") }
                i = spec.end
            default:
                return node
            }
            if repeated {
                throw fail(
                    "bad repetition operator: a repetition cannot be repeated (RE2 has no possessive quantifiers)")
            }
            if case .assertion = node { throw fail("missing argument to repetition operator") }
            if case .empty = node { throw fail("missing argument to repetition operator") }
            var greedy = true
            if peek() == 0x3F {
                i += 1
                greedy = false
            }
            if flags.ungreedy { greedy.toggle() }
            node = .repeating(node, min: lo, max: hi, greedy: greedy)
            repeated = true
        }
        return node
    }

    /// Parses `(...)`, `(?:...)`, `(?P<n>...)`, `(?<n>...)`, `(?flags)`, `(?flags:...)`. Returns nil for a bare
    /// flag group, which changes `flags` for the rest of the enclosing group.
    mutating func parseGroup(_ flags: inout RegexFlags) throws(RegexError) -> RegexNode? {
        i += 1
        var inner = flags
        if peek() == 0x3F {  // ?
            i += 1
            guard let c = peek() else { throw fail("missing closing )") }
            switch c {
            case 0x3D, 0x21: throw fail("lookahead (?= / (?! is not supported (RE2 syntax)")
            case 0x3E: throw fail("atomic groups (?> are not supported (RE2 syntax)")
            case 0x23: throw fail("comments (?# are not supported (RE2 syntax)")
            case 0x3C where peek(1) == 0x3D || peek(1) == 0x21:
                throw fail("lookbehind (?<= / (?<! is not supported (RE2 syntax)")
            case 0x50, 0x3C:  // (?P<name> or (?<name>
                if c == 0x50 { i += 1 }
                guard peek() == 0x3C else { throw fail("invalid named capture group") }
                i += 1
                var name = 0
                while let n = peek(), n != 0x3E {
                    guard (n >= 0x30 && n <= 0x39) || (n >= 0x41 && n <= 0x5A) || (n >= 0x61 && n <= 0x7A) || n == 0x5F
                    else {
                        throw fail("invalid named capture group name")
                    }
                    name += 1
                    i += 1
                }
                guard peek() == 0x3E, name > 0 else { throw fail("invalid named capture group") }
                i += 1
            default:
                var negate = false
                var sawFlag = false
                while true {
                    guard let f = peek() else { throw fail("missing closing )") }
                    i += 1
                    switch f {
                    case 0x69: inner.caseInsensitive = !negate; sawFlag = true
                    case 0x73: inner.dotAll = !negate; sawFlag = true
                    case 0x6D: inner.multiline = !negate; sawFlag = true
                    case 0x55: inner.ungreedy = !negate; sawFlag = true
                    case 0x2D:
                        if negate { throw fail("invalid or unsupported Perl syntax: (?") }
                        negate = true
                    case 0x29:  // (?flags)
                        if !sawFlag { throw fail("invalid or unsupported Perl syntax: (?") }
                        flags = inner
                        return nil
                    case 0x3A:  // (?flags:
                        let body = try parseAlternation(&inner)
                        guard peek() == 0x29 else { throw fail("missing closing )") }
                        i += 1
                        return body
                    default:
                        throw fail("invalid or unsupported Perl syntax: (?\(Character(Unicode.Scalar(f) ?? "?"))")
                    }
                }
            }
        }
        let body = try parseAlternation(&inner)
        guard peek() == 0x29 else { throw fail("missing closing )") }
        i += 1
        return body
    }

    func literal(_ c: UInt32, _ flags: RegexFlags) -> RegexNode {
        guard flags.caseInsensitive else { return .char(c) }
        let folded = RegexParser.caseVariants(c)
        if folded.count == 1 { return .char(c) }
        return .set(RegexParser.normalize(folded.map { $0...$0 }))
    }

    /// A single-character escape (after `\`), shared by classes and atoms. Advances past it.
    mutating func escapedChar(_ c: UInt32) throws(RegexError) -> UInt32 {
        switch c {
        case 0x6E: return 0x0A
        case 0x74: return 0x09
        case 0x72: return 0x0D
        case 0x66: return 0x0C
        case 0x76: return 0x0B
        case 0x61: return 0x07
        case 0x30...0x37:
            if c != 0x30, !(peek().map { $0 >= 0x30 && $0 <= 0x37 } ?? false) {
                throw fail(
                    "invalid escape sequence: backreferences (\\\(Character(Unicode.Scalar(c)!))) are not supported (RE2 syntax)"
                )
            }
            var v = c - 0x30
            var n = 1
            while n < 3, let d = peek(), d >= 0x30, d <= 0x37 {
                v = v * 8 + (d - 0x30)
                i += 1
                n += 1
            }
            return v
        case 0x38, 0x39:
            throw fail("invalid escape sequence: backreferences are not supported (RE2 syntax)")
        case 0x78:  // \xHH or \x{H...}
            var v: UInt32 = 0
            if peek() == 0x7B {
                i += 1
                var n = 0
                while let d = peek(), d != 0x7D {
                    guard let h = RegexParser.hex(d), n < 8 else { throw fail("invalid escape sequence: \\x{") }
                    v = v * 16 + h
                    n += 1
                    i += 1
                }
                guard peek() == 0x7D, n > 0, v <= 0x10FFFF else { throw fail("invalid escape sequence: \\x{") }
                i += 1
                return v
            }
            for _ in 0..<2 {
                guard let d = peek(), let h = RegexParser.hex(d) else { throw fail("invalid escape sequence: \\x") }
                v = v * 16 + h
                i += 1
            }
            return v
        default:
            // RE2 allows escaping any ASCII punctuation; letters/digits with no meaning are errors.
            if c < 0x80, !(c >= 0x30 && c <= 0x39), !(c >= 0x41 && c <= 0x5A), !(c >= 0x61 && c <= 0x7A), c != 0x5F {
                return c
            }
            throw fail("invalid escape sequence: \\\(Character(Unicode.Scalar(c) ?? "?")) (not supported by RE2)")
        }
    }

    static func hex(_ d: UInt32) -> UInt32? {
        switch d {
        case 0x30...0x39: d - 0x30
        case 0x41...0x46: d - 0x37
        case 0x61...0x66: d - 0x57
        default: nil
        }
    }

    mutating func parseEscape(_ flags: RegexFlags) throws(RegexError) -> RegexNode {
        i += 1
        guard let c = peek() else { throw fail("trailing \\ at end of pattern") }
        i += 1
        if let cls = RegexParser.perlClass(c) { return .set(cls) }
        switch c {
        case 0x62: return .assertion(.wordBoundary)
        case 0x42: return .assertion(.notWordBoundary)
        case 0x41: return .assertion(.beginText)
        case 0x7A: return .assertion(.endText)
        case 0x51:  // \Q...\E
            var items: [RegexNode] = []
            while !atEnd {
                if peek() == 0x5C, peek(1) == 0x45 { i += 2; break }
                items.append(literal(s[i], flags))
                i += 1
            }
            return items.isEmpty ? .empty : .concat(items)
        case 0x70, 0x50:
            let item = try parseUnicodeCategory(negated: c == 0x50)
            return .unicodeClass(UnicodeClass(ranges: [], items: [item], negated: false))
        case 0x43: throw fail("\\C (any byte) is not supported")
        case 0x5A: throw fail("invalid escape sequence: \\Z (RE2 has only \\z)")
        default:
            return literal(try escapedChar(c), flags)
        }
    }
}
