internal import PortcullisCore

/// Match resolution and the allow/deny decision.
extension Evaluator {
    // MARK: Decision

    mutating func decide() -> RulesDecision {
        let method = host.request.method
        if method == .list, program.version < 2 {
            hooks.warnOnce(
                .listUnderV1, "list requests are always denied under rules_version '1'; declare rules_version = '2'")
            return RulesDecision(
                allowed: false,
                explanation: trace == nil ? nil : "denied: list operations are only allowed for rules_version = '2'")
        }
        let wanted = MethodSet(method)
        if walk(program.blocks, from: 0, wanted: wanted) { return granted() }
        if method == .list {
            // docs/rules-language.md, "Listing and wildcards": a list of P also counts as a request for "P/<child>", where the child may only be
            // taken by a wildcard, which is then unbound (using it is an error).
            childMarker = true
            if walk(program.blocks, from: 0, wanted: wanted) { return granted() }
        }
        guard var trace else { return RulesDecision(allowed: false, determined: !sawUnknown) }
        let target = "/" + host.requestPath.joined(separator: "/")
        if completeMatches == 0 {
            trace.insert("denied: no match block completely matches \(target)", at: 0)
        } else if trace.isEmpty {
            trace.insert(
                "denied: \(completeMatches) match block(s) match \(target) but none has an allow for '\(method.rawValue)'",
                at: 0)
        } else {
            trace.insert("denied: no allow statement for '\(method.rawValue)' on \(target) evaluated to true", at: 0)
        }
        return RulesDecision(allowed: false, determined: !sawUnknown, explanation: trace.joined(separator: "\n  "))
    }

    func granted() -> RulesDecision {
        guard let trace, let last = trace.last else { return RulesDecision(allowed: true) }
        return RulesDecision(allowed: true, explanation: "allowed: " + last)
    }

    var totalSegments: Int { requestSegmentCount + (childMarker ? 1 : 0) }

    func isMarker(_ i: Int) -> Bool { childMarker && i == requestSegmentCount }

    mutating func walk(_ blocks: [MatchBlock], from position: Int, wanted: MethodSet) -> Bool {
        for block in blocks where match(block, segment: 0, position: position, wanted: wanted) { return true }
        return false
    }

    /// Tries to consume request segments with `block`'s pattern from `segment`; on a full pattern, evaluates
    /// the block's allows when all segments are consumed, and descends into nested blocks.
    mutating func match(_ block: MatchBlock, segment k: Int, position: Int, wanted: MethodSet) -> Bool {
        if k == block.segments.count {
            if position == totalSegments, evaluateAllows(block, wanted: wanted) { return true }
            return walk(block.children, from: position, wanted: wanted)
        }
        switch block.segments[k] {
        case .literal(let text):
            guard position < totalSegments, !isMarker(position), host.requestPath[position].sameBytes(text) else {
                return false
            }
            return match(block, segment: k + 1, position: position + 1, wanted: wanted)
        case .single(let slot, _):
            guard position < totalSegments else { return false }
            frame[slot] = isMarker(position) ? .unbound : .string(host.requestPath[position])
            return match(block, segment: k + 1, position: position + 1, wanted: wanted)
        case .multi(let slot, _):
            let minimum = program.version < 2 ? 1 : 0
            guard position + minimum <= totalSegments else { return false }
            for end in (position + minimum)...totalSegments {
                if childMarker, end > requestSegmentCount {
                    frame[slot] = .unbound
                } else {
                    frame[slot] = .path(Array(host.requestPath[position..<end]))
                }
                if match(block, segment: k + 1, position: end, wanted: wanted) { return true }
            }
            return false
        }
    }

    mutating func evaluateAllows(_ block: MatchBlock, wanted: MethodSet) -> Bool {
        completeMatches += 1
        for allow in block.allows where !allow.methods.isDisjoint(with: wanted) {
            if allow.isVolatile { readVolatile = true }
            let result: Value = allow.condition.map { evaluateTop($0) } ?? .bool(true)
            if trace != nil {
                let outcome: String =
                    switch result {
                    case .bool(let b): "evaluated to \(b)"
                    case .error(let e): "failed: \(e.message)"
                    case .unknown: "depends on a field not known yet"
                    default: "evaluated to a non-boolean (\(result.typeName))"
                    }
                trace!.append(
                    "'\(allow.text)' at \(program.fileName):\(allow.pos) in match \(block.fullPattern) \(outcome)")
            }
            if case .bool(true) = result { return true }
            if result.isUnknown { sawUnknown = true }
        }
        return false
    }

    mutating func evaluateTop(_ e: Expr) -> Value {
        frame.removeLast(frame.count - captureSlots)
        frameBase = captureSlots
        callDepth = 0
        return eval(e)
    }
}
