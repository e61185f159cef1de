// The compiled form of a `NameGlob`: the masks of its `Layout` (`NameGlob+Layout.swift`) as 64-bit words, and the
// simulation of a name over a bitset of states with a fixed number of word passes per scalar.

extension NameGlob {
    /// The masks of a `Layout` as 64-bit words, and the simulation.
    struct Automaton: Sendable {
        /// Sections of `masks`, each `words` long; scalar classes follow `classes`.
        enum Section: Int {
            case initial, loopSlash, loopOther
            case altFirst, altEnd, altTargets, altOrigins
            case topFirst, topEnd, topTargets, topOrigins
            case joins, partneredJoins, groupFields, groupAfter, groupStart, groupLastJoin, altStart
            case classes
        }

        let words: Int
        let hasGroups: Bool
        let acceptWord: Int
        let acceptBit: UInt64
        private let masks: [UInt64]
        /// The scalar class of each ASCII scalar, and of every scalar from `classStarts[k]` up to the next start.
        private let asciiClasses: [UInt16]
        private let classStarts: [UInt32]
        private let startClasses: [UInt16]

        /// Passes over the words per scalar: consume; then, with groups, fill the alternatives, join, fill the top
        /// level, spread into alternatives and fill them; without, fill the top level.
        var passesPerScalar: Int { hasGroups ? 6 : 2 }

        init(_ layout: Layout) {
            let count = layout.kinds.count
            assert(count <= NameGlob.maxStates)
            let words = (count + 63) / 64
            self.words = words
            hasGroups = !layout.groups.isEmpty
            acceptWord = (count - 1) >> 6
            acceptBit = 1 << UInt64((count - 1) & 63)
            var masks = [UInt64](repeating: 0, count: Section.classes.rawValue * words)
            func set(_ section: Section, _ bit: Int) {
                masks[section.rawValue * words + bit >> 6] |= 1 << UInt64(bit & 63)
            }
            for (state, kind) in layout.kinds.enumerated() {
                switch kind {
                case .star: set(.loopOther, state)
                case .deep, .segmentLoop:
                    set(.loopOther, state)
                    set(.loopSlash, state)
                default: break
                }
            }
            for (runs, first, end, targets, origins) in [
                (layout.altRuns, Section.altFirst, Section.altEnd, Section.altTargets, Section.altOrigins),
                (layout.topRuns, .topFirst, .topEnd, .topTargets, .topOrigins),
            ] {
                for run in runs {
                    set(first, run.first)
                    set(end, run.end)
                    for t in run.targets { set(targets, t) }
                    for o in run.origins { set(origins, o) }
                }
            }
            for join in layout.joins { set(.joins, join) }
            for join in layout.partneredJoins { set(.partneredJoins, join) }
            for group in layout.groups {
                for state in (group.start + 1)...group.lastJoin { set(.groupFields, state) }
                set(.groupAfter, group.lastJoin + 1)
                set(.groupStart, group.start)
                set(.groupLastJoin, group.lastJoin)
            }
            for state in layout.altStarts { set(.altStart, state) }

            // Scalar classes: the scalars between two consecutive boundaries are matched by the same states.
            var boundaries: Set<UInt32> = [0, 0x2F, 0x30, 0x80]
            for kind in layout.kinds {
                if case .literal(let c) = kind { boundaries.formUnion([c, c + 1]) }
            }
            for scalarSet in layout.sets {
                for range in scalarSet.ranges { boundaries.formUnion([range.lowerBound, range.upperBound + 1]) }
            }
            let starts = boundaries.filter { $0 <= 0x10FFFF }.sorted()
            var classOf: [[UInt64]: UInt16] = [:]
            var startClasses: [UInt16] = []
            for c in starts {
                var mask = [UInt64](repeating: 0, count: words)
                for (state, kind) in layout.kinds.enumerated() {
                    let hit: Bool
                    switch kind {
                    case .literal(let v): hit = v == c
                    case .one: hit = c != 0x2F
                    case .set(let k): hit = layout.sets[k].contains(c)
                    case .segmentLoop: hit = c == 0x2F
                    default: hit = false
                    }
                    if hit { mask[state >> 6] |= 1 << UInt64(state & 63) }
                }
                if let known = classOf[mask] {
                    startClasses.append(known)
                } else {
                    let index = UInt16(classOf.count)
                    classOf[mask] = index
                    masks += mask
                    startClasses.append(index)
                }
            }
            var asciiClasses = [UInt16](repeating: 0, count: 128)
            var k = 0
            for c in 0..<128 {
                while k + 1 < starts.count, starts[k + 1] <= c { k += 1 }
                asciiClasses[c] = startClasses[k]
            }
            self.asciiClasses = asciiClasses
            classStarts = starts
            self.startClasses = startClasses

            // The initial state set: the start state and everything it reaches without consuming.
            masks.withUnsafeMutableBufferPointer { m in
                let base = m.baseAddress!
                let initial = base + Section.initial.rawValue * words
                initial[0] = 1
                var none = NoSteps()
                Self.close(initial, UnsafePointer(base), words: words, hasGroups: !layout.groups.isEmpty, &none)
            }
            self.masks = masks
        }

        // MARK: Simulation

        /// Runs a UTF-8 name through the automaton; invalid UTF-8 never matches.
        func run<C: GlobStepCounter>(utf8 bytes: UnsafeBufferPointer<UInt8>, counter: inout C) -> Bool {
            var i = 0
            return run(
                next: {
                    guard i < bytes.count else { return nil }
                    let b0 = UInt32(bytes[i])
                    if b0 < 0x80 {
                        i += 1
                        return b0
                    }
                    return Self.decode(bytes, &i)
                }, counter: &counter)
        }

        /// Runs scalars (nil ends the name; `UInt32.max` stands for invalid input and never matches).
        func run<C: GlobStepCounter>(next: () -> UInt32?, counter: inout C) -> Bool {
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { buffer in
                masks.withUnsafeBufferPointer { m in
                    let state = buffer.baseAddress!
                    let base = m.baseAddress!
                    state.initialize(from: base + Section.initial.rawValue * words, count: words)
                    counter.add(words)
                    while let c = next() {
                        guard c != UInt32.max, step(state, base, c, &counter) else { return false }
                    }
                    return state[acceptWord] & acceptBit != 0
                }
            }
        }

        /// Consumes one scalar; false when no state is left (nothing can match any more).
        @inline(__always)
        private func step<C: GlobStepCounter>(
            _ state: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, _ c: UInt32, _ counter: inout C
        ) -> Bool {
            let scalarClass = c < 0x80 ? asciiClasses[Int(c)] : wideClass(c)
            let advance = base + (Section.classes.rawValue + Int(scalarClass)) * words
            let loop = base + (c == 0x2F ? Section.loopSlash : Section.loopOther).rawValue * words
            var carry: UInt64 = 0
            var any: UInt64 = 0
            for w in 0..<words {
                let d = state[w]
                let moved = d & advance[w]
                let next = moved << 1 | carry | d & loop[w]
                carry = moved >> 63
                state[w] = next
                any |= next
            }
            counter.add(words)
            guard any != 0 else { return false }
            Self.close(state, base, words: words, hasGroups: hasGroups, &counter)
            return true
        }

        private func wideClass(_ c: UInt32) -> UInt16 {
            var low = 0
            var high = classStarts.count
            while high - low > 1 {
                let mid = (low + high) / 2
                if classStarts[mid] <= c { low = mid } else { high = mid }
            }
            return startClasses[low]
        }

        /// Adds every state reachable from `state` without consuming a scalar.
        @inline(__always)
        private static func close<C: GlobStepCounter>(
            _ state: UnsafeMutablePointer<UInt64>, _ base: UnsafePointer<UInt64>, words: Int, hasGroups: Bool,
            _ counter: inout C
        ) {
            func section(_ s: Section) -> UnsafePointer<UInt64> { base + s.rawValue * words }
            if hasGroups {
                fill(state, words, section(.altFirst), section(.altEnd), section(.altTargets), section(.altOrigins))
                join(
                    state, words, section(.joins), section(.partneredJoins), section(.groupFields), section(.groupAfter)
                )
            }
            fill(state, words, section(.topFirst), section(.topEnd), section(.topTargets), section(.topOrigins))
            if hasGroups {
                spread(state, words, section(.groupStart), section(.groupLastJoin), section(.altStart))
                fill(state, words, section(.altFirst), section(.altEnd), section(.altTargets), section(.altOrigins))
                counter.add(5 * words)
            } else {
                counter.add(words)
            }
        }

        /// Within each run [first, end]: sets every target above the lowest active origin. With `x` the active
        /// origins and `e` the ends, `(x|e) - first` borrows from `first` up to that origin and no further, so the
        /// bits it leaves unchanged are exactly those above it.
        @inline(__always)
        private static func fill(
            _ state: UnsafeMutablePointer<UInt64>, _ words: Int, _ first: UnsafePointer<UInt64>,
            _ end: UnsafePointer<UInt64>, _ targets: UnsafePointer<UInt64>, _ origins: UnsafePointer<UInt64>
        ) {
            var borrow: UInt64 = 0
            for w in 0..<words {
                let active = state[w] & origins[w] | end[w]
                let (partial, o1) = active.subtractingReportingOverflow(first[w])
                let (difference, o2) = partial.subtractingReportingOverflow(borrow)
                borrow = o1 || o2 ? 1 : 0
                state[w] |= ~(difference ^ active) & targets[w]
            }
        }

        /// Each group's joins carry into the state after the group: adding ones over the group's field
        /// (start + 1 … last join) overflows into the state after it exactly when a join is active. Partnered
        /// joins (an alternative ending in a `**` whose `/` follows the group) land one state further.
        @inline(__always)
        private static func join(
            _ state: UnsafeMutablePointer<UInt64>, _ words: Int, _ joins: UnsafePointer<UInt64>,
            _ partnered: UnsafePointer<UInt64>, _ fields: UnsafePointer<UInt64>, _ after: UnsafePointer<UInt64>
        ) {
            var carry: UInt64 = 0
            var partneredCarry: UInt64 = 0
            var shifted: UInt64 = 0
            for w in 0..<words {
                let d = state[w]
                let (s1, o1) = (d & joins[w]).addingReportingOverflow(fields[w])
                let (sum, o2) = s1.addingReportingOverflow(carry)
                carry = o1 || o2 ? 1 : 0
                let (p1, o3) = (d & partnered[w]).addingReportingOverflow(fields[w])
                let (partneredSum, o4) = p1.addingReportingOverflow(partneredCarry)
                partneredCarry = o3 || o4 ? 1 : 0
                let landed = partneredSum & after[w]
                state[w] = d | sum & after[w] | landed << 1 | shifted
                shifted = landed >> 63
            }
        }

        /// Active group starts spread to their alternatives' first states: `lastJoin - start` sets the span
        /// start … lastJoin - 1 of each active group and leaves inactive groups' last joins alone.
        @inline(__always)
        private static func spread(
            _ state: UnsafeMutablePointer<UInt64>, _ words: Int, _ starts: UnsafePointer<UInt64>,
            _ lastJoins: UnsafePointer<UInt64>, _ altStarts: UnsafePointer<UInt64>
        ) {
            var borrow: UInt64 = 0
            for w in 0..<words {
                let (partial, o1) = lastJoins[w].subtractingReportingOverflow(state[w] & starts[w])
                let (span, o2) = partial.subtractingReportingOverflow(borrow)
                borrow = o1 || o2 ? 1 : 0
                state[w] |= span & altStarts[w]
            }
        }

        /// Decodes the multi-byte UTF-8 sequence at `i` (rejecting overlong forms, surrogates and values above
        /// U+10FFFF, as `String(validating:)` does); `UInt32.max` when it is invalid.
        private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> UInt32 {
            let b0 = bytes[i]
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default: return UInt32.max
            }
            guard bytes.count - i >= length, (low...high).contains(bytes[i + 1]) else { return UInt32.max }
            var value = UInt32(b0) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
            for k in 1..<length {
                let b = bytes[i + k]
                guard b & 0xC0 == 0x80 else { return UInt32.max }
                value = value << 6 | UInt32(b & 0x3F)
            }
            i += length
            return value
        }
    }
}
