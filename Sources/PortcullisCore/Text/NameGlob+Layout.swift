// The first half of compiling a `NameGlob`: the pattern's positions laid out as one automaton's states, and the
// runs, joins and groups its closure works on (`NameGlob+Automaton.swift` turns them into masks and runs names).

extension NameGlob {
    /// The automaton's states in order, and which of them take part in each kind of transition.
    ///
    /// States: one per atom (`?`, a literal, a set, `*`, `**`); two for a `**` that stands as a segment, an
    /// entry (which may skip the whole `**/`) and a loop (which ends by matching its `/`, so that `/` is no
    /// state of its own when it follows in the same sequence); for each group a start state, its alternatives'
    /// states and one join per alternative; last the accepting state. A state is "before" what it matches:
    /// consuming a scalar moves a bit one place up (or keeps it, for the loops of `*` and `**`), and every move
    /// that consumes nothing goes up too, so the closure is a handful of masked carry tricks:
    /// - runs of skippable states (`*`, `**`, `**/`) fill from their lowest active originator to the state after
    ///   the run (the subtraction trick of Navarro and Raffinot's bit-parallel matching);
    /// - a join carries into the state after its group (addition over the group's field), or one state further
    ///   when its alternative ended with a `**` whose `/` is the one after the group;
    /// - a group start spreads to its alternatives' first states (subtraction over the group's span);
    /// - a group with an alternative that can match nothing is one skippable element of the top level's runs.
    struct Layout {
        enum Kind: Equatable {
            case literal(UInt32), one, set(Int), star, deep
            /// A `**` standing as a segment: entered here, it may skip itself and its `/`.
            case segmentEntry
            /// That `**`'s loop: any scalar stays, a `/` also leaves.
            case segmentLoop
            case groupStart, join, accept
        }

        struct Run {
            var first: Int
            var end: Int
            var targets: [Int]
            var origins: [Int]
        }

        struct Group {
            var start: Int
            var lastJoin: Int
        }

        var kinds: [Kind] = []
        var sets: [ScalarSet]
        var altRuns: [Run] = []
        var topRuns: [Run] = []
        var joins: [Int] = []
        var partneredJoins: [Int] = []
        var groups: [Group] = []
        var altStarts: [Int] = []

        static func skippable(_ kind: Kind) -> Bool {
            switch kind {
            case .star, .deep, .segmentEntry, .segmentLoop: true
            default: false
            }
        }

        static func originates(_ kind: Kind) -> Bool {
            switch kind {
            case .star, .deep, .segmentEntry: true
            default: false
            }
        }

        private enum Unit {
            case state(Int)
            case group(start: Int, lastJoin: Int, nullable: Bool, nullableThroughSlash: Bool)
        }

        init(_ parsed: Parsed) {
            sets = parsed.sets
            let items = parsed.items
            let slash = Atom.literal(0x2F)
            func isSlash(_ index: Int) -> Bool {
                guard items.indices.contains(index), case .atom(let atom) = items[index] else { return false }
                return atom == slash
            }
            var units: [Unit] = []
            var p = 0
            while p < items.count {
                switch items[p] {
                case .atom(let atom):
                    if atom == .deep, p == 0 || isSlash(p - 1), isSlash(p + 1) {
                        units.append(.state(emit(.segmentEntry)))
                        units.append(.state(emit(.segmentLoop)))
                        p += 2
                    } else {
                        units.append(.state(emit(Self.kind(atom))))
                        p += 1
                    }
                case .group(let alternatives):
                    let slashBefore = p == 0 || isSlash(p - 1)
                    let slashAfter = isSlash(p + 1)
                    let start = emit(.groupStart)
                    var nullable = false
                    var nullableThroughSlash = false
                    for alternative in alternatives {
                        var states: [Int] = []
                        var partnered = false
                        var k = 0
                        while k < alternative.count {
                            let before = k == 0 ? slashBefore : alternative[k - 1] == slash
                            let slashNext = k + 1 < alternative.count && alternative[k + 1] == slash
                            let slashOutside = k + 1 == alternative.count && slashAfter
                            if alternative[k] == .deep, before, slashNext || slashOutside {
                                states.append(emit(.segmentEntry))
                                states.append(emit(.segmentLoop))
                                partnered = !slashNext
                                k += slashNext ? 2 : 1
                            } else {
                                states.append(emit(Self.kind(alternative[k])))
                                k += 1
                            }
                        }
                        let join = emit(.join)
                        if partnered { partneredJoins.append(join) } else { joins.append(join) }
                        if let first = states.first { altStarts.append(first) }
                        altRuns += runs(states)
                        if states.allSatisfy({ Self.skippable(kinds[$0]) }) {
                            if partnered { nullableThroughSlash = true } else { nullable = true }
                        }
                    }
                    let lastJoin = kinds.count - 1
                    groups.append(Group(start: start, lastJoin: lastJoin))
                    units.append(
                        .group(
                            start: start, lastJoin: lastJoin, nullable: nullable,
                            nullableThroughSlash: nullableThroughSlash))
                    p += 1
                }
            }
            _ = emit(.accept)
            topRuns = topLevelRuns(units)
        }

        private static func kind(_ atom: Atom) -> Kind {
            switch atom {
            case .literal(let c): .literal(c)
            case .one: .one
            case .set(let k): .set(k)
            case .star: .star
            case .deep: .deep
            }
        }

        private mutating func emit(_ kind: Kind) -> Int {
            kinds.append(kind)
            return kinds.count - 1
        }

        /// The runs of skippable states in one sequence of consecutive states (an alternative, before its join).
        private func runs(_ states: [Int]) -> [Run] {
            var result: [Run] = []
            var k = 0
            while k < states.count {
                guard Self.skippable(kinds[states[k]]) else {
                    k += 1
                    continue
                }
                var run = Run(first: states[k], end: 0, targets: [], origins: [])
                while k < states.count, Self.skippable(kinds[states[k]]) {
                    let state = states[k]
                    if state != run.first { run.targets.append(state) }
                    if Self.originates(kinds[state]) { run.origins.append(state) }
                    run.end = state + 1
                    k += 1
                }
                run.targets.append(run.end)
                result.append(run)
            }
            return result
        }

        /// The top level's runs: skippable states and groups that can match nothing. A group that matches nothing
        /// together with the `/` after it (`{**}/`) takes that `/` into the run.
        private func topLevelRuns(_ units: [Unit]) -> [Run] {
            func continues(_ unit: Unit) -> Bool {
                switch unit {
                case .state(let s): Self.skippable(kinds[s])
                case .group(_, _, let nullable, let throughSlash): nullable || throughSlash
                }
            }
            var result: [Run] = []
            var u = 0
            while u < units.count {
                guard continues(units[u]) else {
                    u += 1
                    continue
                }
                var run = Run(first: -1, end: 0, targets: [], origins: [])
                while u < units.count, continues(units[u]) {
                    switch units[u] {
                    case .state(let s):
                        if run.first < 0 { run.first = s } else { run.targets.append(s) }
                        if Self.originates(kinds[s]) { run.origins.append(s) }
                        run.end = s + 1
                    case .group(let start, let lastJoin, _, let throughSlash):
                        if run.first < 0 { run.first = start } else { run.targets.append(start) }
                        run.origins.append(start)
                        run.end = lastJoin + 1
                        if throughSlash {
                            // The next unit is that `/` (a top-level literal, never part of a `**/`): reached as
                            // well, the `**` matching nothing without taking it.
                            run.targets.append(run.end)
                            run.end += 1
                            u += 1
                        }
                    }
                    u += 1
                }
                run.targets.append(run.end)
                result.append(run)
            }
            return result
        }
    }
}
