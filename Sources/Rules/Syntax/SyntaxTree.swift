/// The parsed, unresolved form of a rules file: names are still strings and positions are kept for diagnostics.
struct SyntaxFile {
    var version = 1
    var versionPos: SourcePos?
    var functions: [SyntaxFunction] = []
    var service: SyntaxService?
}

struct SyntaxService {
    var name: String
    var pos: SourcePos
    var functions: [SyntaxFunction] = []
    var matches: [SyntaxMatch] = []
}

enum PatternSegment: Equatable, Sendable {
    case literal(String)
    case single(String)
    case multi(String)

    var text: String {
        switch self {
        case .literal(let s): s
        case .single(let n): "{\(n)}"
        case .multi(let n): "{\(n)=**}"
        }
    }
}

struct SyntaxMatch {
    var pos: SourcePos
    var segments: [(PatternSegment, SourcePos)] = []
    var allows: [SyntaxAllow] = []
    var functions: [SyntaxFunction] = []
    var matches: [SyntaxMatch] = []
    var patternText: String { segments.map { "/" + $0.0.text }.joined() }
}

/// The method words of an `allow`; `read` and `write` are umbrellas.
enum MethodWord: String, CaseIterable {
    case read, write, get, list, create, update, delete
}

struct SyntaxAllow {
    var pos: SourcePos
    var methods: [MethodWord]
    var condition: SyntaxExpr?
    /// The statement as written (whitespace collapsed), for `explain`.
    var text: String
}

struct SyntaxFunction {
    var name: String
    var pos: SourcePos
    var params: [(String, SourcePos)]
    var lets: [(String, SyntaxExpr, SourcePos)]
    var body: SyntaxExpr
}

enum UnaryOp: Sendable { case not, negate }

enum BinaryOp: String, Sendable {
    case add = "+", sub = "-", mul = "*", div = "/", mod = "%"
    case eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">="
    case `in` = "in"
}

enum SyntaxPathPart {
    case text(String)
    case expr(SyntaxExpr)
}

/// An expression node with its source position and subtree depth (bounded so evaluation recursion stays shallow).
struct SyntaxExpr {
    indirect enum Kind {
        case literal(Value)
        case identifier(String)
        case unary(UnaryOp, SyntaxExpr)
        case binary(BinaryOp, SyntaxExpr, SyntaxExpr)
        case and(SyntaxExpr, SyntaxExpr)
        case or(SyntaxExpr, SyntaxExpr)
        case ternary(SyntaxExpr, SyntaxExpr, SyntaxExpr)
        case isType(SyntaxExpr, String)
        case member(SyntaxExpr, String)
        case call(SyntaxExpr, [SyntaxExpr])
        case index(SyntaxExpr, SyntaxExpr)
        case range(SyntaxExpr, SyntaxExpr?, SyntaxExpr?)
        case list([SyntaxExpr])
        case map([(SyntaxExpr, SyntaxExpr)])
        case path([SyntaxPathPart])
    }

    var kind: Kind
    var pos: SourcePos
    var depth: Int
}
