/// A Cloud Storage `matchGlob` pattern, compiled once and matched against object names.
///
/// Syntax (GCS's list-by-glob): `*` matches any run of characters without `/`; `**` any run including `/`
/// (and `/**/` also matches a single `/`, so `a/**/b` matches `a/b`); `?` one character other than `/`;
/// `[abc]`, `[a-z]`, `[!a-z]` one character (not `/`) in or out of a set; `{x,y}` either alternative (not
/// nested); `\c` the character `c` itself. Matching is by Unicode scalars — never by canonical equivalence —
/// and runs as a set of states over the pattern (linear in the name for each alternative), so no pattern can
/// make one name cost more than `name length × pattern length`.
public struct NameGlob: Sendable, Equatable, CustomStringConvertible {
    /// The pattern as given (what a list cursor binds and what equality compares, by bytes).
    public let pattern: String
    private let alternatives: [[Token]]

    /// Longest pattern accepted (GCS's object-name limit), and most alternatives a `{…}` set may expand to.
    public static let maxPatternBytes = 1024
    public static let maxAlternatives = 64

    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        case tooLong
        case unbalanced(String)
        case tooManyAlternatives

        public var description: String {
            switch self {
            case .tooLong: "matchGlob is longer than \(NameGlob.maxPatternBytes) bytes"
            case .unbalanced(let what): "matchGlob has an unbalanced \(what)"
            case .tooManyAlternatives: "matchGlob expands to more than \(NameGlob.maxAlternatives) alternatives"
            }
        }
    }

    private enum Token: Equatable {
        case scalar(Unicode.Scalar)
        /// `?`
        case one
        /// `*`
        case star
        /// `**`; `absorbsSlash` when it stands as a whole segment followed by `/` (`/**/`, or `**/` at the start),
        /// so it may also match nothing together with that `/`.
        case deep(absorbsSlash: Bool)
        case set(ranges: [ClosedRange<UInt32>], negated: Bool)
    }

    public init(_ pattern: String) throws(Error) {
        guard pattern.utf8.count <= Self.maxPatternBytes else { throw .tooLong }
        self.pattern = pattern
        var expanded: [[Unicode.Scalar]] = [[]]
        var scalars = Array(pattern.unicodeScalars)[...]
        // `{a,b}` is expanded first (with escapes kept), so the tokenizer sees plain patterns.
        while let c = scalars.popFirst() {
            if c == "\\", let next = scalars.popFirst() {
                expanded = expanded.map { $0 + [c, next] }
            } else if c == "{" {
                guard let close = scalars.firstIndex(of: "}") else { throw .unbalanced("{") }
                let options = scalars[..<close].split(separator: ",", omittingEmptySubsequences: false)
                scalars = scalars[(close + 1)...]
                guard expanded.count * options.count <= Self.maxAlternatives else { throw .tooManyAlternatives }
                expanded = expanded.flatMap { head in options.map { head + Array($0) } }
            } else if c == "}" {
                throw .unbalanced("}")
            } else {
                expanded = expanded.map { $0 + [c] }
            }
        }
        alternatives = try expanded.map { (scalars) throws(Error) in try Self.tokens(scalars) }
    }

    private static func tokens(_ scalars: [Unicode.Scalar]) throws(Error) -> [Token] {
        var out: [Token] = []
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            switch c {
            case "\\":
                i += 1
                if i < scalars.count { out.append(.scalar(scalars[i])) }
            case "?":
                out.append(.one)
            case "*":
                if i + 1 < scalars.count, scalars[i + 1] == "*" {
                    let segmentStart = i == 0 || scalars[i - 1] == "/"
                    let followedBySlash = i + 2 < scalars.count && scalars[i + 2] == "/"
                    out.append(.deep(absorbsSlash: segmentStart && followedBySlash))
                    i += 1
                } else {
                    out.append(.star)
                }
            case "[":
                var j = i + 1
                var negated = false
                if j < scalars.count, scalars[j] == "!" || scalars[j] == "^" { negated = true; j += 1 }
                var ranges: [ClosedRange<UInt32>] = []
                var first = true
                while j < scalars.count, scalars[j] != "]" || first {
                    first = false
                    var low = scalars[j]
                    if low == "\\", j + 1 < scalars.count { j += 1; low = scalars[j] }
                    if j + 2 < scalars.count, scalars[j + 1] == "-", scalars[j + 2] != "]" {
                        let high = scalars[j + 2]
                        guard low.value <= high.value else { throw .unbalanced("range") }
                        ranges.append(low.value...high.value)
                        j += 3
                    } else {
                        ranges.append(low.value...low.value)
                        j += 1
                    }
                }
                guard j < scalars.count else { throw .unbalanced("[") }
                out.append(.set(ranges: ranges, negated: negated))
                i = j
            default:
                out.append(.scalar(c))
            }
            i += 1
        }
        return out
    }

    /// Whether `name` matches the whole pattern.
    public func matches(_ name: some StringProtocol) -> Bool {
        let scalars = Array(name.unicodeScalars)
        return alternatives.contains { Self.matches($0, scalars) }
    }

    /// Whether `name` (UTF-8) matches; invalid UTF-8 never matches.
    public func matches(utf8 name: some Collection<UInt8>) -> Bool {
        guard let text = String(validating: name, as: UTF8.self) else { return false }
        return matches(text)
    }

    /// Runs the pattern as a set of states (token indices), one step per scalar of the name.
    private static func matches(_ tokens: [Token], _ name: [Unicode.Scalar]) -> Bool {
        var states = [Bool](repeating: false, count: tokens.count + 1)
        states[0] = true
        close(&states, tokens)
        let slash: Unicode.Scalar = "/"
        for c in name {
            var next = [Bool](repeating: false, count: tokens.count + 1)
            var any = false
            for t in 0..<tokens.count where states[t] {
                switch tokens[t] {
                case .scalar(let s): if s == c { next[t + 1] = true; any = true }
                case .one: if c != slash { next[t + 1] = true; any = true }
                case .star: if c != slash { next[t] = true; any = true }
                case .deep: next[t] = true; any = true
                case .set(let ranges, let negated):
                    if c != slash, ranges.contains(where: { $0.contains(c.value) }) != negated {
                        next[t + 1] = true
                        any = true
                    }
                }
            }
            guard any else { return false }
            close(&next, tokens)
            states = next
        }
        return states[tokens.count]
    }

    /// Adds the states reachable without consuming a character: past a star, and past `**/` as a whole.
    private static func close(_ states: inout [Bool], _ tokens: [Token]) {
        for t in 0..<tokens.count where states[t] {
            switch tokens[t] {
            case .star: states[t + 1] = true
            case .deep(let absorbsSlash):
                states[t + 1] = true
                if absorbsSlash { states[t + 2] = true }
            default: break
            }
        }
    }

    public var description: String { pattern }

    public static func == (a: NameGlob, b: NameGlob) -> Bool { a.pattern.bytesEqual(b.pattern) }
}
