internal import PortcullisCore

/// Compile-time evaluation of expressions built only from literals: `[]`, `100 * 1024 * 1024`,
/// `timestamp.date(2030, 1, 1)`, `{'a': 1}`. Run once here instead of on every request.
///
/// Semantics are kept exactly: a folded expression is evaluated by the evaluator itself (so the value is the
/// one a request would compute), and it remembers how many expression evaluations it stood for, which the
/// evaluator still charges to the per-request budget (`Limits.maxExpressionsPerRequest`). Expressions whose
/// value is an error are not folded (a request could reach the budget inside them first, with another
/// message), nor anything that reads the request, calls a function or has an effect (`debug()`,
/// `firestore.*`).
enum ConstantFolding {
    /// `e` folded when all its operands are constants and its kind is pure; otherwise `e` itself.
    static func fold(_ e: Expr) -> Expr {
        guard isFoldable(e) else { return e }
        let request = RulesRequest(method: .get, bucket: "", path: "", time: Timestamp(nanosecondsSinceEpoch: 0))
        return withUnsafePointer(to: request) { pointer in
            var scratch = Evaluator(program: program, request: pointer, hooks: RulesetHooks(), explain: false)
            let value = scratch.eval(e)
            switch value {
            case .error, .host, .unknown: return e
            default: break
            }
            return .folded(value, cost: scratch.evaluated)
        }
    }

    private static let program = Program(
        version: 2, fileName: "<constants>", blocks: [], functions: [], captureSlots: 0)

    private static func isConstant(_ e: Expr) -> Bool {
        switch e {
        case .literal, .folded: true
        default: false
        }
    }

    private static func isFoldable(_ e: Expr) -> Bool {
        switch e {
        case .list(let items): return items.allSatisfy(isConstant)
        case .map(let entries): return entries.allSatisfy { isConstant($0.0) && isConstant($0.1) }
        case .not(let x), .negate(let x): return isConstant(x)
        case .binary(_, let a, let b), .and(let a, let b), .or(let a, let b): return isConstant(a) && isConstant(b)
        case .ternary(let c, let a, let b): return isConstant(c) && isConstant(a) && isConstant(b)
        case .builtin(let builtin, let args):
            switch builtin {
            case .debug, .firestoreGet, .firestoreExists: return false
            default: return args.allSatisfy(isConstant)
            }
        default: return false
        }
    }
}
