internal import PortcullisCore

/// Evaluates one request against a `Program`. Created per decision; not shared across threads.
///
/// Budget: at most `Limits.maxExpressionsPerRequest` expression evaluations per request and
/// `Limits.maxCallDepth` nested function calls; beyond either, expressions evaluate to errors.
struct Evaluator {
    let program: Program
    let host: HostContext
    let hooks: RulesetHooks
    /// Wildcard captures in slots `0..<captureSlots`, then the call frames (parameters and `let`s) above them:
    /// one array per decision, sized once.
    var frame: [Value]
    let captureSlots: Int
    /// Where the running function's frame starts in `frame`.
    var frameBase: Int
    var callDepth = 0
    var evaluated = 0
    /// Explain mode: a record of what was tried.
    var trace: [String]?
    var completeMatches = 0
    var requestSegmentCount: Int
    var childMarker = false
    /// Whether a volatile allow (see `Volatility`) was evaluated: then the decision may not be memoised.
    var readVolatile = false
    /// Some `allow` condition evaluated to `.unknown`: a denial is not final.
    var sawUnknown = false

    init(program: Program, request: UnsafePointer<RulesRequest>, hooks: RulesetHooks, explain: Bool) {
        self.program = program
        let path = request.pointee.path
        // Sized once: `b`, the bucket, `o`, and one segment per `/`-separated piece of the path.
        var segments: [String] = []
        segments.reserveCapacity(path.isEmpty ? 3 : 4 + path.utf8.count(where: { $0 == UInt8(ascii: "/") }))
        segments.append("b")
        segments.append(request.pointee.bucket)
        segments.append("o")
        if !path.isEmpty {
            let utf8 = path.utf8
            var start = utf8.startIndex
            var i = start
            while i != utf8.endIndex {
                if utf8[i] == UInt8(ascii: "/") {
                    segments.append(String(Substring(path.utf8[start..<i])))
                    start = utf8.index(after: i)
                }
                i = utf8.index(after: i)
            }
            segments.append(String(Substring(path.utf8[start..<i])))
        }
        host = HostContext(request: request, requestPath: segments)
        self.hooks = hooks
        captureSlots = max(program.captureSlots, 1)
        frame = []
        frame.reserveCapacity(captureSlots + 32)
        frame.append(contentsOf: repeatElement(Value.null, count: captureSlots))
        frameBase = captureSlots
        requestSegmentCount = segments.count
        trace = explain ? [] : nil
    }

    // MARK: Expressions

    mutating func eval(_ e: Expr) -> Value {
        evaluated += 1
        if evaluated > Limits.maxExpressionsPerRequest {
            return .fail(
                "evaluation budget exceeded (more than \(Limits.maxExpressionsPerRequest) expressions per request)")
        }
        switch e {
        case .literal(let v):
            return v
        case .folded(let v, let cost):
            // Charged as the `cost` expressions it replaced (this one included, above).
            evaluated += cost - 1
            if evaluated > Limits.maxExpressionsPerRequest {
                return .fail(
                    "evaluation budget exceeded (more than \(Limits.maxExpressionsPerRequest) expressions per request)")
            }
            return v
        case .local(let slot):
            return frame[frameBase + slot]
        case .capture(let slot, let name):
            if case .unbound = frame[slot] {
                return .fail("wildcard '\(name)' has no value in a list request")
            }
            return frame[slot]
        case .request:
            return .host(.request)
        case .resource:
            return host.hasResource(proposed: false) ? .host(.resource(proposed: false)) : .null
        case .list(let items):
            var out: [Value] = []
            out.reserveCapacity(items.count)
            for item in items {
                let v0 = eval(item)
                let v = concrete(v0)
                if v.isError || v.isUnknown { return v }
                out.append(v)
            }
            return .list(out)
        case .map(let entries):
            var out: [ExactString: Value] = [:]
            for (ke, ve) in entries {
                let k = eval(ke)
                if k.isError || k.isUnknown { return k }
                guard case .string(let key) = k else { return .fail("map keys must be strings, got \(k.typeName)") }
                let v0 = eval(ve)
                let v = concrete(v0)
                if v.isError || v.isUnknown { return v }
                out[ExactString(key)] = v
            }
            return .map(out)
        case .path(let parts):
            var segments: [String] = []
            for part in parts {
                switch part {
                case .text(let t): segments.append(t)
                case .expr(let x):
                    switch eval(x) {
                    case .string(let s): segments.append(contentsOf: Value.pathSegments(s))
                    case .int(let i): segments.append(String(i))
                    case .path(let p): segments.append(contentsOf: p)
                    case .error(let err): return .error(err)
                    case .unknown: return .unknown
                    case let other: return .fail("cannot interpolate a \(other.typeName) into a path")
                    }
                }
            }
            return .path(segments)
        case .not(let x):
            switch eval(x) {
            case .bool(let b): return .bool(!b)
            case .error(let err): return .error(err)
            case .unknown: return .unknown
            case let v: return .unsupported("!", v)
            }
        case .negate(let x):
            let v = eval(x)
            return v.isUnknown ? v : Operators.negate(v)
        case .binary(let op, let a, let b):
            let l = eval(a)
            let r = eval(b)
            if case .error = l { return l }
            if case .error = r { return r }
            if l.isUnknown || r.isUnknown { return .unknown }
            return binary(op, l, r)
        case .and(let a, let b):
            let l = eval(a)
            if case .bool(false) = l { return l }
            let r = eval(b)
            if case .bool(false) = r { return r }
            if case .error = l { return l }
            if case .error = r { return r }
            if l.isUnknown || r.isUnknown { return .unknown }
            guard case .bool = l else { return .unsupported("&&", l, r) }
            guard case .bool = r else { return .unsupported("&&", l, r) }
            return .bool(true)
        case .or(let a, let b):
            let l = eval(a)
            if case .bool(true) = l { return l }
            let r = eval(b)
            if case .bool(true) = r { return r }
            if l.isUnknown || r.isUnknown { return .unknown }
            if case .error = l { return l }
            if case .error = r { return r }
            guard case .bool = l else { return .unsupported("||", l, r) }
            guard case .bool = r else { return .unsupported("||", l, r) }
            return .bool(false)
        case .ternary(let c, let a, let b):
            switch eval(c) {
            case .bool(true): return eval(a)
            case .bool(false): return eval(b)
            case .error(let err): return .error(err)
            case .unknown: return .unknown
            case let v: return .fail("the condition of '?:' must be a bool, got \(v.typeName)")
            }
        case .isType(let x, let type):
            let v = concrete(eval(x))
            if v.isError || v.isUnknown { return v }
            return .bool(Operators.isType(v, type))
        case .member(let x, let name, let field):
            let base = eval(x)
            return member(base, name, field)
        case .index(let x, let i):
            let base = eval(x)
            let key = eval(i)
            if base.isError { return base }
            if key.isError { return key }
            if base.isUnknown || key.isUnknown { return .unknown }
            return index(base, key)
        case .range(let x, let lo, let hi):
            let base0 = eval(x)
            let base = concrete(base0)
            let l = lo.map { eval($0) }
            let h = hi.map { eval($0) }
            if base.isError { return base }
            if let l, l.isError { return l }
            if let h, h.isError { return h }
            if base.isUnknown || l?.isUnknown == true || h?.isUnknown == true { return .unknown }
            return Operators.range(base, l, h)
        case .method(let x, .get, let args, _) where args.count == 2:
            // `request.auth.token.get(k, d)` / `resource.metadata.get(k, d)`: look up without building the map.
            let receiver0 = eval(x)
            guard case .host(let h) = receiver0 else { return callMethod(receiver0, .get, args, nil) }
            let dflt = eval(args[1])
            let key = eval(args[0])
            if key.isError { return key }
            if dflt.isError { return dflt }
            if key.isUnknown { return key }
            guard case .string(let k) = key else {
                return Library.method(.get, host.materialize(receiver0), [concrete(key), concrete(dflt)], nil)
            }
            return host.field(h, k) ?? concrete(dflt)
        case .method(let x, let method, let args, let regex):
            let receiver0 = eval(x)
            return callMethod(receiver0, method, args, regex)
        case .unknownMethod(let x, let name):
            let receiver = eval(x)
            if receiver.isError { return receiver }
            return .fail("Function not found error: Name: [\(name)].")
        case .call(let index, let args):
            return call(index, args)
        case .builtin(let builtin, let args):
            var values = [Value](repeating: .null, count: args.count)
            for i in args.indices.reversed() {
                let v0 = eval(args[i])
                let v = concrete(v0)
                if v.isError { return v }
                values[i] = v
            }
            if values.contains(where: \.isUnknown) { return .unknown }
            switch builtin {
            case .debug:
                hooks.debug(values[0].rendered)
                return values[0]
            case .firestoreGet, .firestoreExists:
                hooks.warnOnce(
                    .firestore, "\(builtin.rawValue)() is not supported by this gateway; statements using it deny")
                return .fail("\(builtin.rawValue)() is not supported by this gateway")
            default:
                return Library.builtin(builtin, values)
            }
        }
    }

    private mutating func callMethod(_ receiver0: Value, _ method: Method, _ args: [Expr], _ regex: CompiledRegex?)
        -> Value
    {
        let receiver = concrete(receiver0)
        if receiver.isError { return receiver }
        var values = [Value](repeating: .null, count: args.count)
        for i in args.indices.reversed() {
            let v0 = eval(args[i])
            let v = concrete(v0)
            if v.isError { return v }
            values[i] = v
        }
        if receiver.isUnknown || values.contains(where: \.isUnknown) { return .unknown }
        return Library.method(method, receiver, values, regex)
    }

    /// Host values become plain maps before generic operations see them.
    @inline(__always) func concrete(_ v: Value) -> Value {
        if case .host = v { return host.materialize(v) }
        return v
    }

    private mutating func call(_ index: Int, _ args: [Expr]) -> Value {
        guard callDepth < Limits.maxCallDepth else {
            return .fail("function call depth exceeds \(Limits.maxCallDepth)")
        }
        let function = program.functions[index]
        let newBase = frame.count
        frame.append(contentsOf: repeatElement(Value.null, count: function.frameSize))
        defer { frame.removeLast(function.frameSize) }
        for i in args.indices.reversed() {
            let v = eval(args[i])
            if v.isError { return v }
            frame[newBase + i] = v
        }
        let savedBase = frameBase
        frameBase = newBase
        callDepth += 1
        defer {
            frameBase = savedBase
            callDepth -= 1
        }
        for (i, letExpr) in function.lets.enumerated() {
            frame[newBase + function.parameterCount + i] = eval(letExpr)
        }
        return eval(function.body)
    }

    // MARK: Member and index access

    func member(_ base: Value, _ name: String, _ field: HostField? = nil) -> Value {
        switch base {
        case .host(let h):
            if let v = host.field(h, name, field ?? HostField(rawValue: name)) { return v }
            return .fail("Property \(name) is undefined on object \(h.name).")
        case .map(let m):
            if let v = m[ExactString(name)] { return v }
            return .fail("Property \(name) is undefined on object.")
        case .null:
            return .fail("Null value error. Cannot read property '\(name)' of null.")
        case .error, .unknown:
            return base
        default:
            return .fail("Property \(name) is undefined on a value of type \(base.typeName).")
        }
    }

    func index(_ base: Value, _ key: Value) -> Value {
        switch (base, key) {
        case (.host, .string(let k)), (.map, .string(let k)):
            return member(base, k)
        case (.host, _), (.map, _):
            return .fail("map index must be a string, got \(key.typeName)")
        default:
            return Operators.index(base, key)
        }
    }

    /// `==` without materializing host objects unless the other side is a map too
    /// (`request.auth != null` and `resource == null` are the most common conditions).
    /// nil when a materialized side holds a value not known yet.
    func equals(_ l: Value, _ r: Value) -> Bool? {
        switch (l, r) {
        case (.host, .host), (.host, .map), (.map, .host):
            let (cl, cr) = (concrete(l), concrete(r))
            if cl.isUnknown || cr.isUnknown { return nil }
            return Value.looseEquals(cl, cr)
        case (.host, _), (_, .host): return false
        default: return Value.looseEquals(l, r)
        }
    }

    func binary(_ op: BinaryOp, _ l: Value, _ r: Value) -> Value {
        switch op {
        case .eq: return equals(l, r).map { .bool($0) } ?? .unknown
        case .ne: return equals(l, r).map { .bool(!$0) } ?? .unknown
        case .in:
            if case .host(let h) = r {
                guard case .string(let k) = l else { return .bool(false) }
                return .bool(host.field(h, k) != nil)
            }
            let (cl, cr) = (concrete(l), concrete(r))
            if cl.isUnknown || cr.isUnknown { return .unknown }
            return Operators.contains(cr, cl)
        default:
            let (cl, cr) = (concrete(l), concrete(r))
            if cl.isUnknown || cr.isUnknown { return .unknown }
            return Operators.arithmetic(op, cl, cr)
        }
    }
}
