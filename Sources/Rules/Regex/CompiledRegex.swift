/// An RE2-compatible regular expression compiled to a Pike VM program: matching time is linear in
/// input length × program size (no backtracking blow-ups), and both are bounded.
final class CompiledRegex: Sendable {
    enum Inst: Sendable {
        case char(UInt32)
        case set(Int)
        case unicode(Int)
        case any
        case anyNotNewline
        case split(Int, Int)
        case jump(Int)
        case assert(RegexAssertion)
        case match
    }

    let program: [Inst]
    let sets: [[ClosedRange<UInt32>]]
    let unicodeClasses: [UnicodeClass]

    static let maxProgram = 20_000
    /// Upper bound on VM steps (input positions × program size) for one search.
    static let maxWork = 20_000_000

    private init(program: [Inst], sets: [[ClosedRange<UInt32>]], unicodeClasses: [UnicodeClass]) {
        self.program = program
        self.sets = sets
        self.unicodeClasses = unicodeClasses
    }

    static func compile(_ pattern: String) -> Result<CompiledRegex, RegexError> {
        var parser = RegexParser(pattern)
        do {
            let node = try parser.parse()
            var b = Builder()
            try b.emit(node)
            b.program.append(.match)
            return .success(CompiledRegex(program: b.program, sets: b.sets, unicodeClasses: b.unicodeClasses))
        } catch {
            return .failure(error)
        }
    }

    private struct Builder {
        var program: [Inst] = []
        var sets: [[ClosedRange<UInt32>]] = []
        var unicodeClasses: [UnicodeClass] = []

        mutating func check() throws(RegexError) {
            if program.count > CompiledRegex.maxProgram { throw RegexError(message: "pattern too large") }
        }

        mutating func emit(_ node: RegexNode) throws(RegexError) {
            try check()
            switch node {
            case .empty: break
            case .char(let c): program.append(.char(c))
            case .set(let ranges):
                if ranges.count == 1, ranges[0].lowerBound == ranges[0].upperBound {
                    program.append(.char(ranges[0].lowerBound))
                } else {
                    sets.append(ranges)
                    program.append(.set(sets.count - 1))
                }
            case .unicodeClass(let u):
                unicodeClasses.append(u)
                program.append(.unicode(unicodeClasses.count - 1))
            case .any(let nl): program.append(nl ? .any : .anyNotNewline)
            case .assertion(let a): program.append(.assert(a))
            case .concat(let items): for item in items { try emit(item) }
            case .alternate(let branches):
                var jumps: [Int] = []
                for (k, branch) in branches.enumerated() {
                    if k < branches.count - 1 {
                        let split = program.count
                        program.append(.split(split + 1, -1))
                        try emit(branch)
                        jumps.append(program.count)
                        program.append(.jump(-1))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for j in jumps { program[j] = .jump(program.count) }
            case .repeating(let x, let lo, let hi, let greedy):
                for _ in 0..<lo { try emit(x) }
                if let hi {
                    // (x(x(x)?)?)? for the optional part.
                    var splits: [Int] = []
                    for _ in lo..<hi {
                        splits.append(program.count)
                        program.append(.split(-1, -1))
                        try emit(x)
                    }
                    for s in splits {
                        program[s] = greedy ? .split(s + 1, program.count) : .split(program.count, s + 1)
                    }
                } else {
                    let loop = program.count
                    program.append(.split(-1, -1))
                    try emit(x)
                    program.append(.jump(loop))
                    program[loop] = greedy ? .split(loop + 1, program.count) : .split(program.count, loop + 1)
                }
            }
        }
    }

    // MARK: Matching

    /// Whole-string match (`matches`). nil when the work bound is exceeded.
    func wholeMatch(_ s: String) -> Bool? {
        let capacity = s.utf8.count
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: max(capacity, 1)) { buffer in
            var n = 0
            for u in s.unicodeScalars {
                buffer[n] = u.value
                n += 1
            }
            let input = UnsafeBufferPointer(rebasing: buffer[0..<n])
            switch search(input, from: 0, anchored: true, requireEnd: true) {
            case .found: return true
            case .notFound: return false
            case .tooCostly: return nil
            }
        }
    }

    /// Java/RE2J `split` semantics: trailing empty strings are removed; a zero-width match at the start does
    /// not produce a leading empty string.
    func split(_ s: String) -> [String]? {
        let scalars = s.unicodeScalars.map(\.value)
        return scalars.withUnsafeBufferPointer { input in split(input) }
    }

    private func split(_ input: UnsafeBufferPointer<UInt32>) -> [String]? {
        var parts: [String] = []
        var pieceStart = 0
        var pos = 0
        scan: while pos <= input.count {
            let (start, end): (Int, Int)
            switch search(input, from: pos, anchored: false, requireEnd: false) {
            case .found(let s, let e): (start, end) = (s, e)
            case .notFound: break scan
            case .tooCostly: return nil
            }
            if end == start {
                if start >= input.count { break }
                if start > 0 {
                    parts.append(Self.string(input[pieceStart..<start]))
                    pieceStart = start
                }
                pos = start + 1
                continue
            }
            parts.append(Self.string(input[pieceStart..<start]))
            pieceStart = end
            pos = end
            if parts.count > Limits.maxValueElements { return nil }
        }
        parts.append(Self.string(input[pieceStart...]))
        while parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
        if parts.count == 1, parts[0].isEmpty, !input.isEmpty { return [] }
        return parts
    }

    /// Replaces every match with `replacement` (taken literally).
    func replaceAll(_ s: String, with replacement: String) -> String? {
        let scalars = s.unicodeScalars.map(\.value)
        return scalars.withUnsafeBufferPointer { input in replaceAll(input, with: replacement) }
    }

    private func replaceAll(_ input: UnsafeBufferPointer<UInt32>, with replacement: String) -> String? {
        var out = String.UnicodeScalarView()
        let replacementCount = replacement.unicodeScalars.count
        var pos = 0
        var copied = 0
        var produced = 0
        scan: while pos <= input.count {
            let (start, end): (Int, Int)
            switch search(input, from: pos, anchored: false, requireEnd: false) {
            case .found(let s, let e): (start, end) = (s, e)
            case .notFound: break scan
            case .tooCostly: return nil
            }
            for c in input[copied..<start] { out.append(Unicode.Scalar(c)!) }
            out.append(contentsOf: replacement.unicodeScalars)
            produced += start - copied + replacementCount
            if produced > Limits.maxStringBytes { return nil }
            if end == start {
                if start < input.count { out.append(Unicode.Scalar(input[start])!) }
                copied = min(start + 1, input.count)
                pos = start + 1
            } else {
                copied = end
                pos = end
            }
        }
        if copied < input.count { for c in input[copied...] { out.append(Unicode.Scalar(c)!) } }
        return String(out)
    }

    private static func string(_ scalars: Slice<UnsafeBufferPointer<UInt32>>) -> String {
        var v = String.UnicodeScalarView()
        for c in scalars { v.append(Unicode.Scalar(c)!) }
        return String(v)
    }

    private static func isWord(_ c: UInt32) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
    }

    private func assertionHolds(_ a: RegexAssertion, _ input: UnsafeBufferPointer<UInt32>, _ pos: Int) -> Bool {
        switch a {
        case .beginText: return pos == 0
        case .endText: return pos == input.count
        case .beginLine: return pos == 0 || input[pos - 1] == 0x0A
        case .endLine: return pos == input.count || input[pos] == 0x0A
        case .wordBoundary, .notWordBoundary:
            let before = pos > 0 && Self.isWord(input[pos - 1])
            let after = pos < input.count && Self.isWord(input[pos])
            return (before != after) == (a == .wordBoundary)
        }
    }

    private func inSet(_ index: Int, _ c: UInt32) -> Bool {
        let ranges = sets[index]
        var lo = 0, hi = ranges.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            if c < ranges[mid].lowerBound {
                hi = mid - 1
            } else if c > ranges[mid].upperBound {
                lo = mid + 1
            } else {
                return true
            }
        }
        return false
    }

    /// Leftmost-first search from `from`. Returns nil when the work bound is exceeded.
    /// Scratch space (two thread lists, marks, the follow stack) lives in one temporary allocation.
    private enum SearchResult {
        case found(Int, Int)
        case notFound
        /// Input length × program size exceeds `maxWork`.
        case tooCostly
    }

    private func search(_ input: UnsafeBufferPointer<UInt32>, from: Int, anchored: Bool, requireEnd: Bool)
        -> SearchResult
    {
        let n = input.count
        let size = program.count
        if (n - from + 1) * size > CompiledRegex.maxWork { return .tooCostly }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 7 * size + 2) { scratch in
            scratch.initialize(repeating: -1)
            let currentPcs = scratch.baseAddress!
            let currentStarts = currentPcs + size
            let nextPcs = currentStarts + size
            let nextStarts = nextPcs + size
            let mark = nextStarts + size
            let stack = mark + size  // 2 * size + 2 slots: each pc is expanded once and pushes at most two
            var lists = (
                UnsafeMutablePointer(currentPcs), UnsafeMutablePointer(currentStarts), 0,
                UnsafeMutablePointer(nextPcs), UnsafeMutablePointer(nextStarts), 0
            )
            var generation = 0
            var found: (Int, Int)?

            /// Adds `pc0` and everything reachable through jumps/splits/assertions, in priority order.
            func add(
                _ pcs: UnsafeMutablePointer<Int>, _ starts: UnsafeMutablePointer<Int>, _ count: inout Int,
                _ pc0: Int, _ start: Int, _ pos: Int
            ) {
                var depth = 0
                stack[depth] = pc0
                depth += 1
                while depth > 0 {
                    depth -= 1
                    let pc = stack[depth]
                    if mark[pc] == generation { continue }
                    mark[pc] = generation
                    switch program[pc] {
                    case .jump(let t):
                        stack[depth] = t
                        depth += 1
                    case .split(let a, let b):
                        stack[depth] = b
                        stack[depth + 1] = a
                        depth += 2
                    case .assert(let a):
                        if assertionHolds(a, input, pos) {
                            stack[depth] = pc + 1
                            depth += 1
                        }
                    default:
                        pcs[count] = pc
                        starts[count] = start
                        count += 1
                    }
                }
            }

            add(lists.0, lists.1, &lists.2, 0, from, from)
            var pos = from
            while true {
                generation += 1
                lists.5 = 0
                var i = 0
                stepLoop: while i < lists.2 {
                    let pc = lists.0[i]
                    let start = lists.1[i]
                    i += 1
                    let advance: Bool
                    switch program[pc] {
                    case .match:
                        if requireEnd && pos != n { continue }
                        found = (start, pos)
                        if requireEnd { return .found(start, pos) }
                        break stepLoop  // lower-priority threads are cut
                    case .char(let c): advance = pos < n && input[pos] == c
                    case .set(let k): advance = pos < n && inSet(k, input[pos])
                    case .unicode(let k): advance = pos < n && unicodeClasses[k].contains(input[pos])
                    case .any: advance = pos < n
                    case .anyNotNewline: advance = pos < n && input[pos] != 0x0A
                    default: advance = false
                    }
                    if advance { add(lists.3, lists.4, &lists.5, pc + 1, start, pos + 1) }
                }
                if pos >= n { break }
                pos += 1
                if found == nil, !anchored { add(lists.3, lists.4, &lists.5, 0, pos, pos) }
                lists = (lists.3, lists.4, lists.5, lists.0, lists.1, 0)
                if lists.2 == 0 { break }
            }
            if let (start, end) = found { return .found(start, end) }
            return .notFound
        }
    }
}
