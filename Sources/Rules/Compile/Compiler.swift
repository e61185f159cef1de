/// Resolves a parsed file into a `Program` and applies the compile-time checks of docs/rules-language.md:
/// unknown identifiers and functions, arity, recursion, wildcard placement, `let` under v1, and limits.
struct Compiler {
    /// One lexical level: a file, the service, or a match block (with its wildcard slots).
    final class Scope {
        let parent: Scope?
        var captures: [String: Int] = [:]
        var functions: [String: Int] = [:]
        init(parent: Scope?) { self.parent = parent }

        func capture(_ name: String) -> Int? { captures[name] ?? parent?.capture(name) }
        func function(_ name: String) -> Int? { functions[name] ?? parent?.function(name) }
    }

    struct Context {
        var scope: Scope
        var locals: [String: Int] = [:]
        var function: Int?
    }

    let file: SyntaxFile
    let fileName: String
    var errors: [RulesDiagnostic] = []
    var warnings: [RulesDiagnostic] = []
    private var functions: [CompiledFunction?] = []
    private var functionInfo: [(name: String, pos: SourcePos, parameters: Int)] = []
    private var calls: [Set<Int>] = []
    private var maxSlots = 0

    init(file: SyntaxFile, fileName: String) {
        self.file = file
        self.fileName = fileName
    }

    mutating func error(_ pos: SourcePos, _ message: String) {
        errors.append(RulesDiagnostic(file: fileName, line: pos.line, column: pos.column, message: message))
    }

    mutating func warn(_ pos: SourcePos, _ message: String) {
        warnings.append(RulesDiagnostic(file: fileName, line: pos.line, column: pos.column, message: message))
    }

    mutating func compile() -> Program {
        let fileScope = Scope(parent: nil)
        declareFunctions(file.functions, in: fileScope)
        var blocks: [MatchBlock] = []
        if let service = file.service {
            let serviceScope = Scope(parent: fileScope)
            declareFunctions(service.functions, in: serviceScope)
            for m in service.matches {
                blocks.append(compileMatch(m, parent: serviceScope, prefix: "", slotBase: 0, segmentBase: 0))
            }
        }
        checkRecursion()
        let compiledFunctions = functions.map {
            $0 ?? CompiledFunction(name: "?", parameterCount: 0, lets: [], body: .literal(.null))
        }
        var volatility = Volatility(functions: compiledFunctions)
        return Program(
            version: file.version, fileName: fileName, blocks: blocks.map { volatility.marking($0) },
            functions: compiledFunctions, captureSlots: maxSlots)
    }

    // MARK: Functions

    private mutating func declareFunctions(_ decls: [SyntaxFunction], in scope: Scope) {
        var declared: [(SyntaxFunction, Int)] = []
        for f in decls {
            if scope.functions[f.name] != nil {
                error(f.pos, "function '\(f.name)' is already defined in this scope")
                continue
            }
            if Builtin.namespaces.contains(f.name) {
                error(f.pos, "'\(f.name)' is a library namespace and cannot be used as a function name")
                continue
            }
            let index = functions.count
            functions.append(nil)
            functionInfo.append((f.name, f.pos, f.params.count))
            calls.append([])
            scope.functions[f.name] = index
            declared.append((f, index))
        }
        for (f, index) in declared {
            compileFunction(f, index: index, scope: scope)
        }
    }

    private mutating func compileFunction(_ f: SyntaxFunction, index: Int, scope: Scope) {
        if f.params.count > Limits.maxFunctionParameters {
            error(
                f.pos,
                "function '\(f.name)' has \(f.params.count) parameters; the limit is \(Limits.maxFunctionParameters)")
        }
        if f.lets.count > Limits.maxLetBindings {
            error(f.pos, "function '\(f.name)' has \(f.lets.count) let bindings; the limit is \(Limits.maxLetBindings)")
        }
        if file.version < 2, let first = f.lets.first {
            error(first.2, "'let' bindings require rules_version = '2'")
        }
        var ctx = Context(scope: scope, locals: [:], function: index)
        for (i, (name, pos)) in f.params.enumerated() {
            if ctx.locals[name] != nil { error(pos, "duplicate parameter '\(name)'") }
            checkBindingName(name, pos)
            ctx.locals[name] = i
        }
        var lets: [Expr] = []
        for (name, expr, pos) in f.lets {
            let compiled = compileExpr(expr, &ctx)
            if ctx.locals[name] != nil { error(pos, "'\(name)' is already defined in this function") }
            checkBindingName(name, pos)
            ctx.locals[name] = f.params.count + lets.count
            lets.append(compiled)
        }
        let body = compileExpr(f.body, &ctx)
        functions[index] = CompiledFunction(name: f.name, parameterCount: f.params.count, lets: lets, body: body)
    }

    private mutating func checkBindingName(_ name: String, _ pos: SourcePos) {
        if Builtin.namespaces.contains(name) || name == "request" || name == "resource" {
            error(pos, "'\(name)' is a reserved name and cannot be used as a variable")
        }
    }

    private mutating func checkRecursion() {
        // Iterative DFS with colours; reports each cycle once at the first function found on it.
        var colour = [UInt8](repeating: 0, count: calls.count)
        for start in calls.indices where colour[start] == 0 {
            var stack: [(Int, [Int])] = [(start, Array(calls[start]).sorted())]
            var path = [start]
            colour[start] = 1
            while !stack.isEmpty {
                if stack[stack.count - 1].1.isEmpty {
                    colour[stack.removeLast().0] = 2
                    path.removeLast()
                    continue
                }
                let next = stack[stack.count - 1].1.removeFirst()
                if colour[next] == 1 {
                    let cycleStart = path.firstIndex(of: next) ?? 0
                    let names = (path[cycleStart...] + [next]).map { functionInfo[$0].name }
                    error(
                        functionInfo[next].pos,
                        "recursive function calls are not allowed: \(names.joined(separator: " -> "))")
                } else if colour[next] == 0 {
                    colour[next] = 1
                    path.append(next)
                    stack.append((next, Array(calls[next]).sorted()))
                }
            }
        }
    }

    // MARK: Match blocks

    private mutating func compileMatch(
        _ m: SyntaxMatch, parent: Scope, prefix: String, slotBase: Int, segmentBase: Int
    ) -> MatchBlock {
        let scope = Scope(parent: parent)
        var segments: [CompiledSegment] = []
        var slot = slotBase
        var multis = 0
        for (i, (seg, pos)) in m.segments.enumerated() {
            switch seg {
            case .literal(let s):
                segments.append(.literal(s))
            case .single(let name), .multi(let name):
                if scope.captures[name] != nil {
                    error(pos, "wildcard '\(name)' appears twice in this match pattern")
                }
                checkBindingName(name, pos)
                scope.captures[name] = slot
                if case .multi = seg {
                    multis += 1
                    if multis > 1 {
                        error(pos, "only one recursive wildcard ({name=**}) is allowed per match statement")
                    }
                    if file.version < 2, i != m.segments.count - 1 {
                        error(
                            pos,
                            "a recursive wildcard must be the last segment under rules_version '1' (use rules_version = '2')"
                        )
                    }
                    segments.append(.multi(slot: slot, name: name))
                } else {
                    segments.append(.single(slot: slot, name: name))
                }
                slot += 1
            }
        }
        if slot > Limits.maxCaptures {
            error(m.pos, "more than \(Limits.maxCaptures) wildcard variables across nested match blocks")
        }
        if segmentBase + m.segments.count > Limits.maxPathSegments {
            error(m.pos, "more than \(Limits.maxPathSegments) path segments across nested match blocks")
        }
        maxSlots = max(maxSlots, slot)
        declareFunctions(m.functions, in: scope)
        let full = prefix + m.patternText
        var allows: [CompiledAllow] = []
        var declared = MethodSet()
        for a in m.allows {
            var mine = MethodSet()
            for w in a.methods { mine.formUnion(MethodSet(w)) }
            if !declared.isDisjoint(with: mine) {
                warn(
                    a.pos,
                    "methods overlap with an earlier allow in this match block (harmless: any one granting allows)")
            }
            declared.formUnion(mine)
            var ctx = Context(scope: scope)
            let condition = a.condition.map { compileExpr($0, &ctx) }
            var methods = MethodSet()
            for w in a.methods { methods.formUnion(MethodSet(w)) }
            if file.version < 2, a.methods.contains(.list) {
                warn(a.pos, "'list' is only evaluated under rules_version = '2'; list requests are always denied")
            }
            allows.append(CompiledAllow(methods: methods, condition: condition, pos: a.pos, text: a.text))
        }
        let children = m.matches.map {
            compileMatch($0, parent: scope, prefix: full, slotBase: slot, segmentBase: segmentBase + m.segments.count)
        }
        return MatchBlock(segments: segments, fullPattern: full, pos: m.pos, allows: allows, children: children)
    }

    // MARK: Expressions

    mutating func compileExpr(_ e: SyntaxExpr, _ ctx: inout Context) -> Expr {
        switch e.kind {
        case .literal(let v):
            return .literal(v)
        case .identifier(let name):
            return resolveIdentifier(name, e.pos, ctx)
        case .unary(let op, let x):
            let c = compileExpr(x, &ctx)
            return ConstantFolding.fold(op == .not ? .not(c) : .negate(c))
        case .binary(let op, let a, let b):
            return ConstantFolding.fold(.binary(op, compileExpr(a, &ctx), compileExpr(b, &ctx)))
        case .and(let a, let b):
            return ConstantFolding.fold(.and(compileExpr(a, &ctx), compileExpr(b, &ctx)))
        case .or(let a, let b):
            return ConstantFolding.fold(.or(compileExpr(a, &ctx), compileExpr(b, &ctx)))
        case .ternary(let c, let a, let b):
            return ConstantFolding.fold(.ternary(compileExpr(c, &ctx), compileExpr(a, &ctx), compileExpr(b, &ctx)))
        case .isType(let x, let name):
            return .isType(compileExpr(x, &ctx), TypeTest(rawValue: name) ?? .null)
        case .member(let base, let name):
            if case .identifier(let ns) = base.kind, isNamespace(ns, ctx) {
                error(e.pos, "'\(ns).\(name)' is a library function and must be called")
                return .literal(.null)
            }
            return .member(compileExpr(base, &ctx), name, HostField(rawValue: name))
        case .index(let a, let i):
            return .index(compileExpr(a, &ctx), compileExpr(i, &ctx))
        case .range(let a, let lo, let hi):
            return .range(compileExpr(a, &ctx), lo.map { compileExpr($0, &ctx) }, hi.map { compileExpr($0, &ctx) })
        case .list(let items):
            return ConstantFolding.fold(.list(items.map { compileExpr($0, &ctx) }))
        case .map(let entries):
            return ConstantFolding.fold(.map(entries.map { (compileExpr($0.0, &ctx), compileExpr($0.1, &ctx)) }))
        case .path(let parts):
            return .path(
                parts.map {
                    switch $0 {
                    case .text(let t): .text(t)
                    case .expr(let x): .expr(compileExpr(x, &ctx))
                    }
                })
        case .call(let callee, let args):
            return compileCall(callee, args, e.pos, &ctx)
        }
    }

    private func isNamespace(_ name: String, _ ctx: Context) -> Bool {
        Builtin.namespaces.contains(name) && ctx.locals[name] == nil && ctx.scope.capture(name) == nil
    }

    private mutating func resolveIdentifier(_ name: String, _ pos: SourcePos, _ ctx: Context) -> Expr {
        if let slot = ctx.locals[name] { return .local(slot) }
        if let slot = ctx.scope.capture(name) { return .capture(slot, name: name) }
        switch name {
        case "request": return .request
        case "resource": return .resource
        default: break
        }
        if Builtin.namespaces.contains(name) {
            error(pos, "'\(name)' is a library namespace and cannot be used as a value")
        } else if ctx.scope.function(name) != nil || Builtin(rawValue: name) != nil {
            error(pos, "'\(name)' is a function and must be called")
        } else {
            error(pos, "unknown identifier '\(name)'")
        }
        return .literal(.null)
    }

    private mutating func compileCall(
        _ callee: SyntaxExpr, _ args: [SyntaxExpr], _ pos: SourcePos,
        _ ctx: inout Context
    ) -> Expr {
        let compiledArgs = args.map { compileExpr($0, &ctx) }
        switch callee.kind {
        case .identifier(let name):
            if let index = ctx.scope.function(name) {
                let declared = functionParameterCount(index)
                if let declared, declared != args.count {
                    error(
                        pos,
                        "function '\(name)' takes \(declared) argument\(declared == 1 ? "" : "s"), called with \(args.count)"
                    )
                }
                if let caller = ctx.function { calls[caller].insert(index) }
                return .call(index, compiledArgs)
            }
            if let builtin = Builtin(rawValue: name), !name.utf8.contains(UInt8(ascii: ".")) {
                return checkedBuiltin(builtin, compiledArgs, pos)
            }
            if Builtin.firestoreOnlyGlobals.contains(name) {
                error(
                    pos,
                    "unknown function '\(name)' (Firestore-only; in Storage rules use firestore.\(name == "getAfter" ? "get" : name == "existsAfter" ? "exists" : name)())"
                )
            } else {
                error(pos, "unknown function '\(name)'")
            }
            return .literal(.null)
        case .member(let base, let methodName):
            if case .identifier(let ns) = base.kind, isNamespace(ns, ctx) {
                guard let builtin = Builtin(rawValue: "\(ns).\(methodName)") else {
                    error(pos, "unknown function '\(ns).\(methodName)'")
                    return .literal(.null)
                }
                return checkedBuiltin(builtin, compiledArgs, pos)
            }
            let receiver = compileExpr(base, &ctx)
            guard let method = Method(rawValue: methodName) else {
                warn(pos, "no type has a method '\(methodName)'; this call always fails")
                return .unknownMethod(receiver, methodName)
            }
            if method.arity != args.count {
                error(
                    pos,
                    "method '\(methodName)' takes \(method.arity) argument\(method.arity == 1 ? "" : "s"), called with \(args.count)"
                )
            }
            var regex: CompiledRegex?
            if method.takesRegex, case .literal(.string(let pattern))? = compiledArgs.first {
                switch CompiledRegex.compile(pattern) {
                case .success(let r): regex = r
                case .failure(let failure):
                    warn(
                        args[0].pos,
                        "invalid regular expression '\(pattern)': \(failure.message); this call always fails")
                }
            }
            return .method(receiver, method, compiledArgs, regex)
        default:
            error(pos, "only functions can be called")
            return .literal(.null)
        }
    }

    private func functionParameterCount(_ index: Int) -> Int? { functionInfo[index].parameters }

    private mutating func checkedBuiltin(_ b: Builtin, _ args: [Expr], _ pos: SourcePos) -> Expr {
        if b.arity != args.count {
            error(pos, "'\(b.rawValue)' takes \(b.arity) argument\(b.arity == 1 ? "" : "s"), called with \(args.count)")
            // Not folded: the library reads its arguments by position, trusting the arity checked here.
            return .literal(.null)
        }
        if b == .firestoreGet || b == .firestoreExists {
            warn(pos, "\(b.rawValue)() is not supported by this gateway: it always evaluates to an error (deny)")
        }
        return ConstantFolding.fold(.builtin(b, args))
    }
}
