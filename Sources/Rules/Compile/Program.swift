/// The compiled, immutable form of a ruleset: resolved names, slot-addressed variables, pre-compiled regexes.
final class Program: Sendable {
    let version: Int
    let fileName: String
    let blocks: [MatchBlock]
    let functions: [CompiledFunction]
    /// Capture slots needed by the deepest nest of matches.
    let captureSlots: Int

    init(version: Int, fileName: String, blocks: [MatchBlock], functions: [CompiledFunction], captureSlots: Int) {
        self.version = version
        self.fileName = fileName
        self.blocks = blocks
        self.functions = functions
        self.captureSlots = captureSlots
    }
}

enum CompiledSegment: Sendable {
    case literal(String)
    case single(slot: Int, name: String)
    case multi(slot: Int, name: String)
}

/// A class so that walking the tree per request retains one reference per block, not each array inside.
final class MatchBlock: Sendable {
    let segments: [CompiledSegment]
    /// The whole pattern from the service root, e.g. `/b/{bucket}/o/images/{id}`, for explanations.
    let fullPattern: String
    let pos: SourcePos
    let allows: [CompiledAllow]
    let children: [MatchBlock]

    init(
        segments: [CompiledSegment], fullPattern: String, pos: SourcePos, allows: [CompiledAllow],
        children: [MatchBlock]
    ) {
        self.segments = segments
        self.fullPattern = fullPattern
        self.pos = pos
        self.allows = allows
        self.children = children
    }
}

/// Bit set over `RulesMethod`.
struct MethodSet: OptionSet, Sendable {
    let rawValue: UInt8
    static let get = MethodSet(rawValue: 1)
    static let list = MethodSet(rawValue: 2)
    static let create = MethodSet(rawValue: 4)
    static let update = MethodSet(rawValue: 8)
    static let delete = MethodSet(rawValue: 16)
    static let read: MethodSet = [.get, .list]
    static let write: MethodSet = [.create, .update, .delete]

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init(_ word: MethodWord) {
        switch word {
        case .read: self = .read
        case .write: self = .write
        case .get: self = .get
        case .list: self = .list
        case .create: self = .create
        case .update: self = .update
        case .delete: self = .delete
        }
    }

    init(_ method: RulesMethod) {
        switch method {
        case .get: self = .get
        case .list: self = .list
        case .create: self = .create
        case .update: self = .update
        case .delete: self = .delete
        }
    }
}

final class CompiledAllow: Sendable {
    let methods: MethodSet
    let condition: Expr?
    let pos: SourcePos
    let text: String
    /// Whether the condition may read what a memoised decision is not keyed on (see `Volatility`): a request
    /// that evaluates it is decided afresh every time.
    let isVolatile: Bool

    init(methods: MethodSet, condition: Expr?, pos: SourcePos, text: String, isVolatile: Bool = true) {
        self.methods = methods
        self.condition = condition
        self.pos = pos
        self.text = text
        self.isVolatile = isVolatile
    }
}

final class CompiledFunction: Sendable {
    let name: String
    let parameterCount: Int
    let lets: [Expr]
    let body: Expr

    init(name: String, parameterCount: Int, lets: [Expr], body: Expr) {
        self.name = name
        self.parameterCount = parameterCount
        self.lets = lets
        self.body = body
    }

    var frameSize: Int { parameterCount + lets.count }
}

enum PathPartExpr: Sendable {
    case text(String)
    case expr(Expr)
}

/// A resolved expression. Variables are slots, functions are indexes, library calls are enum cases.
indirect enum Expr: Sendable {
    case literal(Value)
    /// A constant computed at compile time from `cost` literal-only expressions (see `ConstantFolding`).
    case folded(Value, cost: Int)
    case local(Int)
    case capture(Int, name: String)
    case request
    case resource
    case list([Expr])
    case map([(Expr, Expr)])
    case path([PathPartExpr])
    case not(Expr)
    case negate(Expr)
    case binary(BinaryOp, Expr, Expr)
    case and(Expr, Expr)
    case or(Expr, Expr)
    case ternary(Expr, Expr, Expr)
    case isType(Expr, TypeTest)
    case member(Expr, String, HostField?)
    case index(Expr, Expr)
    case range(Expr, Expr?, Expr?)
    /// Receiver, method, arguments, and the regex pre-compiled from a literal first argument (if any).
    case method(Expr, Method, [Expr], CompiledRegex?)
    /// A method name that no type has: evaluates to "Function not found".
    case unknownMethod(Expr, String)
    case call(Int, [Expr])
    case builtin(Builtin, [Expr])
}
