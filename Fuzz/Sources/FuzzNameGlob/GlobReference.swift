/// An independent reading of `NameGlob`'s documented semantics, to check the automaton against: its own parser,
/// the "stands as a segment" rule decided on the pattern as written, alternatives expanded into plain
/// sequences (a cross product, so small patterns only), and a memoized recursive matcher per sequence.
enum GlobReference {
    enum Failure: Error, Equatable {
        case tooLong, unbalanced(String), tooManyAlternatives
    }

    enum Token: Equatable {
        case literal(UInt32)
        case one
        case set([ClosedRange<UInt32>], negated: Bool)
        case star
        /// `**`; `segment`: it stands as a segment, so `**` together with the `/` token after it may match nothing.
        case deep(segment: Bool)
    }

    /// A top-level piece: a token, or a group of alternatives.
    private enum Piece {
        case token(Token)
        case group([[Token]])
    }

    /// The pattern's alternatives as plain token sequences, or why it is refused; nil sequences when there are
    /// more than `maxExpansions` of them (the pattern is valid but too big to expand).
    static func compile(_ pattern: String, maxExpansions: Int = 64) -> Result<[[Token]]?, Failure> {
        if pattern.utf8.count > 1024 { return .failure(.tooLong) }
        let s = Array(pattern.unicodeScalars).map(\.value)
        var pieces: [Piece] = []
        var alternatives = 0
        var pos = 0
        // Reads one token at `pos` (nil: a lone trailing backslash).
        func token() -> Result<Token?, Failure> {
            let c = s[pos]
            pos += 1
            if c == 0x5C {  // backslash
                if pos == s.count { return .success(nil) }
                pos += 1
                return .success(.literal(s[pos - 1]))
            }
            if c == 0x3F { return .success(.one) }
            if c == 0x2A {
                if pos < s.count && s[pos] == 0x2A {
                    pos += 1
                    return .success(.deep(segment: false))
                }
                return .success(.star)
            }
            if c != 0x5B { return .success(.literal(c)) }
            // A set: `!` or `^` negates; a `]` right after the opening (and negation) is a member.
            var negated = false
            if pos < s.count && (s[pos] == 0x21 || s[pos] == 0x5E) {
                negated = true
                pos += 1
            }
            var ranges: [ClosedRange<UInt32>] = []
            var isFirst = true
            while true {
                if pos >= s.count { return .failure(.unbalanced("[")) }
                if s[pos] == 0x5D && !isFirst { break }
                isFirst = false
                var lo = s[pos]
                if lo == 0x5C && pos + 1 < s.count {
                    pos += 1
                    lo = s[pos]
                }
                if pos + 2 < s.count && s[pos + 1] == 0x2D && s[pos + 2] != 0x5D {
                    let hi = s[pos + 2]
                    if lo > hi { return .failure(.unbalanced("range")) }
                    ranges.append(lo...hi)
                    pos += 3
                } else {
                    ranges.append(lo...lo)
                    pos += 1
                }
            }
            pos += 1
            return .success(.set(ranges, negated: negated))
        }
        while pos < s.count {
            if s[pos] == 0x7B {  // {
                pos += 1
                var alts: [[Token]] = [[]]
                var closed = false
                while pos < s.count {
                    if s[pos] == 0x2C {
                        alts.append([])
                        pos += 1
                    } else if s[pos] == 0x7D {
                        pos += 1
                        closed = true
                        break
                    } else {
                        switch token() {
                        case .failure(let f): return .failure(f)
                        case .success(let t?): alts[alts.count - 1].append(t)
                        case .success(nil): break
                        }
                    }
                }
                if !closed { return .failure(.unbalanced("{")) }
                alternatives += alts.count
                if alternatives > 256 { return .failure(.tooManyAlternatives) }
                pieces.append(.group(alts))
            } else if s[pos] == 0x7D {
                return .failure(.unbalanced("}"))
            } else {
                switch token() {
                case .failure(let f): return .failure(f)
                case .success(let t?): pieces.append(.token(t))
                case .success(nil): break
                }
            }
        }
        // The segment rule, on the pattern as written: a `/` token (or the pattern's start) right before, a `/`
        // token right after; a `**` at an alternative's edge looks at the tokens around its group.
        let slash = Token.literal(0x2F)
        func slashPiece(_ i: Int) -> Bool {
            guard i >= 0 && i < pieces.count, case .token(let t) = pieces[i] else { return false }
            return t == slash
        }
        for i in pieces.indices {
            switch pieces[i] {
            case .token(.deep):
                if (i == 0 || slashPiece(i - 1)) && slashPiece(i + 1) { pieces[i] = .token(.deep(segment: true)) }
            case .group(var alts):
                for a in alts.indices {
                    for k in alts[a].indices where alts[a][k] == .deep(segment: false) {
                        let before = k == 0 ? (i == 0 || slashPiece(i - 1)) : alts[a][k - 1] == slash
                        let after = k == alts[a].count - 1 ? slashPiece(i + 1) : alts[a][k + 1] == slash
                        if before && after { alts[a][k] = .deep(segment: true) }
                    }
                }
                pieces[i] = .group(alts)
            default: break
            }
        }
        var expansions: [[Token]] = [[]]
        for piece in pieces {
            switch piece {
            case .token(let t): expansions = expansions.map { $0 + [t] }
            case .group(let alts):
                if expansions.count * alts.count > maxExpansions { return .success(nil) }
                expansions = expansions.flatMap { head in alts.map { head + $0 } }
            }
        }
        return .success(expansions)
    }

    /// Whether `name` matches one of the sequences.
    static func matches(_ sequences: [[Token]], _ name: [UInt32]) -> Bool {
        sequences.contains { matches($0, name) }
    }

    static func matches(_ tokens: [Token], _ name: [UInt32]) -> Bool {
        // memo[(t * (n + 1) + i) * 2 + looping]: 0 unknown, 1 no, 2 yes.
        let n = name.count
        var memo = [UInt8](repeating: 0, count: (tokens.count + 1) * (n + 1) * 2)
        func at(_ t: Int, _ i: Int, _ looping: Bool) -> Bool {
            let key = (t * (n + 1) + i) * 2 + (looping ? 1 : 0)
            if memo[key] != 0 { return memo[key] == 2 }
            let result: Bool
            if t == tokens.count {
                result = i == n
            } else {
                let c: UInt32? = i < n ? name[i] : nil
                switch tokens[t] {
                case .literal(let v): result = c == v && at(t + 1, i + 1, false)
                case .one: result = c != nil && c != 0x2F && at(t + 1, i + 1, false)
                case .set(let ranges, let negated):
                    if let c, c != 0x2F, ranges.contains(where: { $0.contains(c) }) != negated {
                        result = at(t + 1, i + 1, false)
                    } else {
                        result = false
                    }
                case .star: result = at(t + 1, i, false) || (c != nil && c != 0x2F && at(t, i + 1, true))
                case .deep(let segment):
                    // Entered afresh, a segment `**` may skip itself and the `/` after it; once it has matched
                    // a scalar it may not.
                    result =
                        (segment && !looping && at(t + 2, i, false)) || at(t + 1, i, false)
                        || (c != nil && at(t, i + 1, true))
                }
            }
            memo[key] = result ? 2 : 1
            return result
        }
        return at(0, 0, false)
    }
}
