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
            if repeated { throw fail("bad repetition operator: a repetition cannot be repeated (RE2 has no possessive quantifiers)") }
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
                    guard (n >= 0x30 && n <= 0x39) || (n >= 0x41 && n <= 0x5A) || (n >= 0x61 && n <= 0x7A) || n == 0x5F else {
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

    static func caseVariants(_ c: UInt32) -> [UInt32] {
        var out = [c]
        if c >= 0x41, c <= 0x5A { out.append(c + 32) }
        else if c >= 0x61, c <= 0x7A { out.append(c - 32) }
        else if c >= 0x80, let u = Unicode.Scalar(c) {
            for m in [u.properties.lowercaseMapping, u.properties.uppercaseMapping] {
                let scalars = Array(m.unicodeScalars)
                if scalars.count == 1, scalars[0].value != c { out.append(scalars[0].value) }
            }
        }
        return out
    }

    static func normalize(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var out: [ClosedRange<UInt32>] = []
        for r in sorted {
            if let last = out.last, r.lowerBound <= last.upperBound &+ 1 {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                out.append(r)
            }
        }
        return out
    }

    static func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var out: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for r in normalize(ranges) {
            if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
            next = r.upperBound &+ 1
            if r.upperBound == 0x10FFFF { return out }
        }
        out.append(next...0x10FFFF)
        return out
    }

    static let digit: [ClosedRange<UInt32>] = [0x30...0x39]
    static let word: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
    static let space: [ClosedRange<UInt32>] = [0x09...0x0A, 0x0C...0x0D, 0x20...0x20]

    static func posixClass(_ name: String) -> [ClosedRange<UInt32>]? {
        switch name {
        case "alnum": [0x30...0x39, 0x41...0x5A, 0x61...0x7A]
        case "alpha": [0x41...0x5A, 0x61...0x7A]
        case "ascii": [0x00...0x7F]
        case "blank": [0x09...0x09, 0x20...0x20]
        case "cntrl": [0x00...0x1F, 0x7F...0x7F]
        case "digit": [0x30...0x39]
        case "graph": [0x21...0x7E]
        case "lower": [0x61...0x7A]
        case "print": [0x20...0x7E]
        case "punct": [0x21...0x2F, 0x3A...0x40, 0x5B...0x60, 0x7B...0x7E]
        case "space": [0x09...0x0D, 0x20...0x20]
        case "upper": [0x41...0x5A]
        case "word": word
        case "xdigit": [0x30...0x39, 0x41...0x46, 0x61...0x66]
        default: nil
        }
    }

    /// Perl class escapes `\d \D \w \W \s \S`, or nil.
    static func perlClass(_ c: UInt32) -> [ClosedRange<UInt32>]? {
        switch c {
        case 0x64: digit
        case 0x44: complement(digit)
        case 0x77: word
        case 0x57: complement(word)
        case 0x73: space
        case 0x53: complement(space)
        default: nil
        }
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
                throw fail("invalid escape sequence: backreferences (\\\(Character(Unicode.Scalar(c)!))) are not supported (RE2 syntax)")
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
        case 0x70, 0x50: throw fail("Unicode classes \\p / \\P are not supported by this engine")
        case 0x43: throw fail("\\C (any byte) is not supported")
        case 0x5A: throw fail("invalid escape sequence: \\Z (RE2 has only \\z)")
        default:
            return literal(try escapedChar(c), flags)
        }
    }

    mutating func parseClass(_ flags: RegexFlags) throws(RegexError) -> RegexNode {
        i += 1
        var negated = false
        if peek() == 0x5E { negated = true; i += 1 }
        var ranges: [ClosedRange<UInt32>] = []
        var first = true
        while true {
            guard let c = peek() else { throw fail("missing closing ]") }
            if c == 0x5D, !first { i += 1; break }
            first = false
            if c == 0x5B, peek(1) == 0x3A {  // [:name:]
                var j = i + 2
                var name = ""
                var neg = false
                if j < s.count, s[j] == 0x5E { neg = true; j += 1 }
                while j < s.count, s[j] != 0x3A, let u = Unicode.Scalar(s[j]) { name.unicodeScalars.append(u); j += 1 }
                if j + 1 < s.count, s[j] == 0x3A, s[j + 1] == 0x5D {
                    guard let cls = RegexParser.posixClass(name) else { throw fail("invalid character class range: [:\(name):]") }
                    ranges += neg ? RegexParser.complement(cls) : cls
                    i = j + 2
                    continue
                }
            }
            var lo: UInt32
            if c == 0x5C {
                i += 1
                guard let e = peek() else { throw fail("missing closing ]") }
                i += 1
                if let cls = RegexParser.perlClass(e) { ranges += cls; continue }
                if e == 0x70 || e == 0x50 { throw fail("Unicode classes \\p / \\P are not supported by this engine") }
                if e == 0x62 { lo = 0x08 } else { lo = try escapedChar(e) }
            } else {
                i += 1
                lo = c
            }
            var hi = lo
            if peek() == 0x2D, let n = peek(1), n != 0x5D {
                i += 1
                if n == 0x5C {
                    i += 1
                    guard let e = peek() else { throw fail("missing closing ]") }
                    i += 1
                    if RegexParser.perlClass(e) != nil { throw fail("invalid character class range") }
                    hi = try escapedChar(e)
                } else {
                    i += 1
                    hi = n
                }
                if hi < lo { throw fail("invalid character class range") }
            }
            ranges.append(lo...hi)
        }
        if flags.caseInsensitive {
            var extra: [ClosedRange<UInt32>] = []
            for r in ranges where r.count <= 2000 {
                for c in r { for v in RegexParser.caseVariants(c) where v != c { extra.append(v...v) } }
            }
            ranges += extra
        }
        let normalized = RegexParser.normalize(ranges)
        return .set(negated ? RegexParser.complement(normalized) : normalized)
    }
}
