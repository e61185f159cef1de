/// Character classes: `[...]`, POSIX `[:name:]`, Perl `\d \w \s` (case folding: `RegexParser+CaseFolding.swift`).
extension RegexParser {
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

    mutating func parseClass(_ flags: RegexFlags) throws(RegexError) -> RegexNode {
        i += 1
        var negated = false
        if peek() == 0x5E { negated = true; i += 1 }
        var ranges: [ClosedRange<UInt32>] = []
        var categories: [UnicodeCategoryItem] = []
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
                    guard let cls = RegexParser.posixClass(name) else {
                        throw fail("invalid character class range: [:\(name):]")
                    }
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
                if e == 0x70 || e == 0x50 {
                    categories.append(try parseUnicodeCategory(negated: e == 0x50))
                    continue
                }
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
            ranges += ranges.flatMap { RegexParser.caseVariants(outside: $0) }.map { $0...$0 }
        }
        let normalized = RegexParser.normalize(ranges)
        if !categories.isEmpty {
            return .unicodeClass(UnicodeClass(ranges: normalized, items: categories, negated: negated))
        }
        return .set(negated ? RegexParser.complement(normalized) : normalized)
    }

    /// After `\p`/`\P`: a one-letter name (`\pL`) or `{Name}` / `{^Name}`. General categories only (RE2 also
    /// has scripts such as `Greek`; those are refused).
    mutating func parseUnicodeCategory(negated: Bool) throws(RegexError) -> UnicodeCategoryItem {
        var name = ""
        var negate = negated
        if peek() == 0x7B {
            i += 1
            if peek() == 0x5E { negate.toggle(); i += 1 }
            while let c = peek(), c != 0x7D, let u = Unicode.Scalar(c) { name.unicodeScalars.append(u); i += 1 }
            guard peek() == 0x7D else { throw fail("invalid character class range: missing } after \\p{") }
            i += 1
        } else if let c = peek(), let u = Unicode.Scalar(c) {
            name.unicodeScalars.append(u)
            i += 1
        }
        guard let set = UnicodeClass.categories(named: name) else {
            throw fail("invalid character class range: \\p{\(name)} (only Unicode general categories are supported)")
        }
        return UnicodeCategoryItem(categories: set, negated: negate)
    }
}
