/// Which `allow` conditions read parts of a request that a memoised decision is not keyed on.
///
/// A decision memo (see `DecisionMemo`) is keyed by method, bucket, object path and the caller's credential.
/// A condition is *volatile* when its value may depend on anything else — `request.time`, `resource`,
/// `request.resource`, `request` as a whole (its materialized map holds all of them) — or when it has a side
/// effect that must happen on every request (`debug()`). Function calls are volatile when the function's
/// `let`s or body are. The analysis is conservative: only `request.auth`, `request.path`, `request.method` and
/// `request.params` are known to be keyed.
struct Volatility {
    private let functions: [CompiledFunction]
    /// Per function: nil = not yet known, or the answer.
    private var known: [Bool?]
    private var visiting: Set<Int> = []

    init(functions: [CompiledFunction]) {
        self.functions = functions
        known = Array(repeating: nil, count: functions.count)
    }

    /// Whether evaluating `e` may read an unkeyed part of the request (or must not be skipped).
    mutating func isVolatile(_ e: Expr) -> Bool {
        switch e {
        case .literal, .folded, .local, .capture:
            return false
        case .request, .resource:
            return true
        case .member(.request, _, let field):
            switch field {
            case .auth, .path, .method, .params: return false
            default: return true
            }
        case .member(let x, _, _), .not(let x), .negate(let x), .isType(let x, _), .unknownMethod(let x, _):
            return isVolatile(x)
        case .list(let items):
            return items.contains { isVolatile($0) }
        case .map(let entries):
            return entries.contains { isVolatile($0.0) || isVolatile($0.1) }
        case .path(let parts):
            return parts.contains {
                if case .expr(let x) = $0 { return isVolatile(x) }
                return false
            }
        case .binary(_, let a, let b), .and(let a, let b), .or(let a, let b), .index(let a, let b):
            return isVolatile(a) || isVolatile(b)
        case .ternary(let c, let a, let b):
            return isVolatile(c) || isVolatile(a) || isVolatile(b)
        case .range(let x, let lo, let hi):
            return isVolatile(x) || lo.map { isVolatile($0) } == true || hi.map { isVolatile($0) } == true
        case .method(let x, _, let args, _):
            return isVolatile(x) || args.contains { isVolatile($0) }
        case .call(let index, let args):
            return isFunctionVolatile(index) || args.contains { isVolatile($0) }
        case .builtin(let builtin, let args):
            return builtin == .debug || args.contains { isVolatile($0) }
        }
    }

    private mutating func isFunctionVolatile(_ index: Int) -> Bool {
        guard functions.indices.contains(index) else { return true }
        if let answer = known[index] { return answer }
        // A cycle only exists in programs that failed to compile; answer conservatively.
        guard visiting.insert(index).inserted else { return true }
        let function = functions[index]
        let answer = function.lets.contains { isVolatile($0) } || isVolatile(function.body)
        visiting.remove(index)
        known[index] = answer
        return answer
    }

    /// `block` with each allow's `isVolatile` filled in, recursively.
    mutating func marking(_ block: MatchBlock) -> MatchBlock {
        let allows = block.allows.map { allow in
            CompiledAllow(
                methods: allow.methods, condition: allow.condition, pos: allow.pos, text: allow.text,
                isVolatile: allow.condition.map { isVolatile($0) } ?? false)
        }
        return MatchBlock(
            segments: block.segments, fullPattern: block.fullPattern, pos: block.pos, allows: allows,
            children: block.children.map { marking($0) })
    }
}
