/// A Cloud Storage `matchGlob` pattern, compiled once into an automaton and matched against object names.
///
/// Syntax (GCS's list-by-glob): `*` matches any run of characters without `/`; `**` any run including `/`
/// (and `/**/` also matches a single `/`, so `a/**/b` matches `a/b`); `?` one character other than `/`;
/// `[abc]`, `[a-z]`, `[!a-z]` one character (not `/`) in or out of a set; `{x,y}` either alternative (not
/// nested); `\c` the character `c` itself. Matching is by Unicode scalars — never by canonical equivalence.
///
/// In detail:
/// - `**/` matches nothing (with its `/`) only where the `**` stands as a whole segment: a `/` (or the start of
///   the pattern) right before it and a `/` right after it. So `**/x` matches `x` and `a/**/b` matches `a/b`,
///   while `a/**/b` never matches `a/xb` and `a**/b` never matches `ab`.
/// - Inside `{…}`, `,` and `}` end an alternative unless escaped (`\,`, `\}`), a set `[…]` is read whole (its
///   `,` and `}` are members), and `{` is an ordinary character. A token never spans a brace: `*{*}` is two
///   single stars, not `**`. A `**` that begins or ends an alternative looks past the brace at the pattern
///   around the group for its `/`s (`x/{**/a,b}` and `{a/**,b}/c` match `x/a` and `a/c`); one right after
///   `}` or right before `{` does not stand as a segment (`{a/,b/}**/c` does not match `a/c`).
/// - A lone `\` at the end of the pattern is ignored.
///
/// Cost: the pattern compiles to one position automaton of at most `maxStates` states (one per pattern byte
/// at most, so ≤ 17 words of 64 bits), which every name runs through as a bitset: each Unicode scalar costs a
/// fixed number of passes over those words (`workPerScalar`) and no allocation, whatever the pattern —
/// alternatives are branches of the one automaton, never expanded copies of the pattern. `matchCost` is the
/// bound for one name; a list page spends at most a budget of it (`ListPageBuilder`).
public struct NameGlob: Sendable, Equatable, CustomStringConvertible {
    /// The pattern as given (what a list cursor binds and what equality compares, by bytes).
    public let pattern: String
    private let automaton: Automaton

    /// Longest pattern accepted (GCS's object-name limit).
    public static let maxPatternBytes = 1024
    /// Most alternatives accepted, counted over every `{…}` group of the pattern (`{a,b}{c,d,e}` has five).
    public static let maxAlternatives = 256
    /// Most automaton states: every pattern byte yields at most one state, plus the accepting one.
    public static let maxStates = maxPatternBytes + 1

    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        case tooLong
        case unbalanced(String)
        case tooManyAlternatives

        public var description: String {
            switch self {
            case .tooLong: "matchGlob is longer than \(NameGlob.maxPatternBytes) bytes"
            case .unbalanced(let what): "matchGlob has an unbalanced \(what)"
            case .tooManyAlternatives: "matchGlob has more than \(NameGlob.maxAlternatives) alternatives"
            }
        }
    }

    public init(_ pattern: String) throws(Error) {
        guard pattern.utf8.count <= Self.maxPatternBytes else { throw .tooLong }
        self.pattern = pattern
        let parsed = try Parser.parse(Array(pattern.unicodeScalars))
        automaton = Automaton(Layout(parsed))
    }

    /// Whether `name` matches the whole pattern.
    public func matches(_ name: some StringProtocol) -> Bool {
        var counter = NoSteps()
        var scalars = name.unicodeScalars.makeIterator()
        return automaton.run(next: { scalars.next()?.value }, counter: &counter)
    }

    /// Whether `name` (UTF-8) matches; invalid UTF-8 never matches.
    public func matches(utf8 name: some Collection<UInt8>) -> Bool {
        var counter = NoSteps()
        return run(utf8: name, &counter)
    }

    /// Whether `name` (UTF-8) matches, adding the word operations spent to `work` (at most
    /// `matchCost(byteCount: name.count)`): what a list page counts against its budget.
    public func matches(utf8 name: some Collection<UInt8>, work: inout Int) -> Bool {
        var counter = CountedSteps()
        defer { work += counter.steps }
        return run(utf8: name, &counter)
    }

    private func run<C: GlobStepCounter>(utf8 name: some Collection<UInt8>, _ counter: inout C) -> Bool {
        if let result = name.withContiguousStorageIfAvailable({ automaton.run(utf8: $0, counter: &counter) }) {
            return result
        }
        return Array(name).withUnsafeBufferPointer { automaton.run(utf8: $0, counter: &counter) }
    }

    /// Word operations matching one Unicode scalar costs: a fixed number of passes (2, or 6 with `{…}`) over
    /// the automaton's words (at most 17).
    public var workPerScalar: Int { automaton.passesPerScalar * automaton.words }

    /// The most word operations matching a name of `byteCount` bytes can cost: one scalar per byte at most,
    /// plus setting up.
    public func matchCost(byteCount: Int) -> Int { (byteCount + 1) * workPerScalar }

    /// The automaton's size in 64-bit words (what one pass over the state set costs).
    var automatonWords: Int { automaton.words }

    public var description: String { pattern }

    public static func == (a: NameGlob, b: NameGlob) -> Bool { a.pattern.bytesEqual(b.pattern) }
}

// MARK: - Parsing

extension NameGlob {
    /// One element of a sequence: what a single position of the automaton matches.
    enum Atom: Equatable {
        case literal(UInt32)
        /// `?`
        case one
        /// `[…]`: an index into `Parsed.sets`.
        case set(Int)
        /// `*`
        case star
        /// `**`
        case deep
    }

    enum Item {
        case atom(Atom)
        /// `{…}`: its alternatives, each a sequence of atoms (possibly empty).
        case group([[Atom]])
    }

    struct ScalarSet {
        var ranges: [ClosedRange<UInt32>]
        var negated: Bool

        func contains(_ c: UInt32) -> Bool {
            c != 0x2F && ranges.contains { $0.contains(c) } != negated
        }
    }

    struct Parsed {
        var items: [Item] = []
        var sets: [ScalarSet] = []
    }

    enum Parser {
        static func parse(_ scalars: [Unicode.Scalar]) throws(Error) -> Parsed {
            var parsed = Parsed()
            var group: [[Atom]]?
            var alternatives = 0
            var i = 0
            while i < scalars.count {
                let c = scalars[i]
                if group != nil {
                    if c == "," {
                        group!.append([])
                        i += 1
                        continue
                    }
                    if c == "}" {
                        alternatives += group!.count
                        guard alternatives <= NameGlob.maxAlternatives else { throw .tooManyAlternatives }
                        parsed.items.append(.group(group!))
                        group = nil
                        i += 1
                        continue
                    }
                } else if c == "{" {
                    group = [[]]
                    i += 1
                    continue
                } else if c == "}" {
                    throw .unbalanced("}")
                }
                guard let atom = try atom(scalars, &i, &parsed.sets) else { continue }
                if group != nil {
                    group![group!.count - 1].append(atom)
                } else {
                    parsed.items.append(.atom(atom))
                }
            }
            guard group == nil else { throw .unbalanced("{") }
            return parsed
        }

        /// Reads the atom at `i` and moves past it; nil for a lone `\` at the end.
        private static func atom(_ scalars: [Unicode.Scalar], _ i: inout Int, _ sets: inout [ScalarSet])
            throws(Error) -> Atom?
        {
            let c = scalars[i]
            i += 1
            switch c {
            case "\\":
                guard i < scalars.count else { return nil }
                i += 1
                return .literal(scalars[i - 1].value)
            case "?":
                return .one
            case "*":
                guard i < scalars.count, scalars[i] == "*" else { return .star }
                i += 1
                return .deep
            case "[":
                var j = i
                var negated = false
                if j < scalars.count, scalars[j] == "!" || scalars[j] == "^" {
                    negated = true
                    j += 1
                }
                var ranges: [ClosedRange<UInt32>] = []
                var first = true
                while j < scalars.count, scalars[j] != "]" || first {
                    first = false
                    var low = scalars[j]
                    if low == "\\", j + 1 < scalars.count {
                        j += 1
                        low = scalars[j]
                    }
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
                i = j + 1
                sets.append(ScalarSet(ranges: ranges, negated: negated))
                return .set(sets.count - 1)
            default:
                return .literal(c.value)
            }
        }
    }
}

// MARK: - Step counting

/// Where the matcher reports its word operations: nothing in production, a count in tests.
protocol GlobStepCounter {
    mutating func add(_ steps: Int)
}

struct NoSteps: GlobStepCounter {
    @inline(__always) mutating func add(_ steps: Int) {}
}

struct CountedSteps: GlobStepCounter {
    var steps = 0
    mutating func add(_ steps: Int) { self.steps += steps }
}
