/// Expression grammar of the rules language, lowest precedence first.
extension Parser {
    func node(_ kind: SyntaxExpr.Kind, _ pos: SourcePos, _ children: SyntaxExpr?...) throws(SyntaxFailure) -> SyntaxExpr
    {
        var depth = 0
        for c in children { if let c { depth = max(depth, c.depth) } }
        return try node(kind, pos, depth: depth + 1)
    }

    func node(_ kind: SyntaxExpr.Kind, _ pos: SourcePos, depth: Int) throws(SyntaxFailure) -> SyntaxExpr {
        guard depth <= Limits.maxExpressionDepth else {
            throw SyntaxFailure(
                pos: pos, message: "expression nested too deep (more than \(Limits.maxExpressionDepth) levels)")
        }
        return SyntaxExpr(kind: kind, pos: pos, depth: depth)
    }

    mutating func parseExpression() throws(SyntaxFailure) -> SyntaxExpr {
        let cond = try parseOr()
        guard try isPunct(.question) else { return cond }
        let q = try take()
        let a = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
        try expect(.colon, "in the conditional expression 'c ? a : b'")
        let b = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
        return try node(.ternary(cond, a, b), q.pos, cond, a, b)
    }

    mutating func parseOr() throws(SyntaxFailure) -> SyntaxExpr {
        var lhs = try parseAnd()
        while try isPunct(.or) {
            let t = try take()
            let rhs = try parseAnd()
            lhs = try node(.or(lhs, rhs), t.pos, lhs, rhs)
        }
        return lhs
    }

    mutating func parseAnd() throws(SyntaxFailure) -> SyntaxExpr {
        var lhs = try parseEquality()
        while try isPunct(.and) {
            let t = try take()
            let rhs = try parseEquality()
            lhs = try node(.and(lhs, rhs), t.pos, lhs, rhs)
        }
        return lhs
    }

    mutating func parseEquality() throws(SyntaxFailure) -> SyntaxExpr {
        var lhs = try parseIs()
        while true {
            let op: BinaryOp
            if try isPunct(.eq) { op = .eq } else if try isPunct(.ne) { op = .ne } else { return lhs }
            let t = try take()
            let rhs = try parseIs()
            lhs = try node(.binary(op, lhs, rhs), t.pos, lhs, rhs)
        }
    }

    mutating func parseIs() throws(SyntaxFailure) -> SyntaxExpr {
        let lhs = try parseIn()
        guard try isWord("is") else { return lhs }
        let t = try take()
        let tn = try take()
        guard case .identifier(let name) = tn.kind else {
            throw SyntaxFailure(pos: tn.pos, message: "expected a type name after 'is', found \(tn.describe)")
        }
        guard TypeTest(rawValue: name) != nil else {
            throw SyntaxFailure(
                pos: tn.pos,
                message:
                    "unknown type '\(name)' after 'is'; expected one of \(TypeTest.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        return try node(.isType(lhs, name), t.pos, lhs)
    }

    mutating func parseIn() throws(SyntaxFailure) -> SyntaxExpr {
        var lhs = try parseRelational()
        while try isWord("in") {
            let t = try take()
            let rhs = try parseRelational()
            lhs = try node(.binary(.in, lhs, rhs), t.pos, lhs, rhs)
        }
        return lhs
    }

    mutating func parseRelational() throws(SyntaxFailure) -> SyntaxExpr {
        var lhs = try parseAdditive()
        while true {
            let op: BinaryOp
            if try isPunct(.lt) {
                op = .lt
            } else if try isPunct(.le) {
                op = .le
            } else if try isPunct(.gt) {
                op = .gt
            } else if try isPunct(.ge) {
                op = .ge
            } else {
                return lhs
            }
            let t = try take()
            let rhs = try parseAdditive()
            lhs = try node(.binary(op, lhs, rhs), t.pos, lhs, rhs)
        }
    }

    mutating func parseAdditive() throws(SyntaxFailure) -> SyntaxExpr {
        var lhs = try parseMultiplicative()
        while true {
            let op: BinaryOp
            if try isPunct(.plus) { op = .add } else if try isPunct(.minus) { op = .sub } else { return lhs }
            let t = try take()
            let rhs = try parseMultiplicative()
            lhs = try node(.binary(op, lhs, rhs), t.pos, lhs, rhs)
        }
    }

    mutating func parseMultiplicative() throws(SyntaxFailure) -> SyntaxExpr {
        var lhs = try parseUnary()
        while true {
            let op: BinaryOp
            if try isPunct(.star) {
                op = .mul
            } else if try isPunct(.slash) {
                op = .div
            } else if try isPunct(.percent) {
                op = .mod
            } else {
                return lhs
            }
            let t = try take()
            let rhs = try parseUnary()
            lhs = try node(.binary(op, lhs, rhs), t.pos, lhs, rhs)
        }
    }

    mutating func parseUnary() throws(SyntaxFailure) -> SyntaxExpr {
        let t = try peek()
        if case .punct(.not) = t.kind {
            try take()
            let e = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseUnary() }
            return try node(.unary(.not, e), t.pos, e)
        }
        if case .punct(.minus) = t.kind {
            try take()
            // Fold negative numeric literals so that -9223372036854775808 is representable.
            let n = try peek()
            switch n.kind {
            case .int(let v):
                try take()
                return try parsePostfix(try node(.literal(.int(-v)), t.pos))
            case .intOverflow(let text):
                try take()
                guard text == "9223372036854775808" else {
                    throw SyntaxFailure(pos: n.pos, message: "integer literal -\(text) is out of the 64-bit range")
                }
                return try parsePostfix(try node(.literal(.int(Int64.min)), t.pos))
            default:
                let e = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseUnary() }
                return try node(.unary(.negate, e), t.pos, e)
            }
        }
        return try parsePostfix(try parsePrimary())
    }

    /// Runs a recursive production with the nesting counter raised, refusing input nested beyond the limit.
    mutating func nested<T>(_ body: (inout Parser) throws(SyntaxFailure) -> T) throws(SyntaxFailure) -> T {
        nestingDepth += 1
        defer { nestingDepth -= 1 }
        if nestingDepth > Limits.maxExpressionDepth {
            throw SyntaxFailure(
                pos: lexer.pos, message: "expression nested too deep (more than \(Limits.maxExpressionDepth) levels)")
        }
        return try body(&self)
    }

    mutating func parsePostfix(_ base: SyntaxExpr) throws(SyntaxFailure) -> SyntaxExpr {
        var e = base
        while true {
            let t = try peek()
            switch t.kind {
            case .punct(.dot):
                try take()
                let nt = try take()
                guard case .identifier(let name) = nt.kind else {
                    throw SyntaxFailure(
                        pos: nt.pos, message: "expected a field or method name after '.', found \(nt.describe)")
                }
                e = try node(.member(e, name), nt.pos, e)
                if try isPunct(.lparen) {
                    let args = try parseArguments()
                    e = try node(.call(e, args), nt.pos, depth: max(e.depth, args.map(\.depth).max() ?? 0) + 1)
                }
            case .punct(.lbracket):
                try take()
                if try accept(.colon) {
                    let hi = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
                    try expect(.rbracket, "to close the range")
                    e = try node(.range(e, nil, hi), t.pos, e, hi)
                    continue
                }
                let first = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
                if try accept(.colon) {
                    var hi: SyntaxExpr?
                    if !(try isPunct(.rbracket)) {
                        hi = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
                    }
                    try expect(.rbracket, "to close the range")
                    e = try node(.range(e, first, hi), t.pos, e, first, hi)
                } else {
                    try expect(.rbracket, "to close the index")
                    e = try node(.index(e, first), t.pos, e, first)
                }
            case .punct(.lparen):
                guard case .identifier = e.kind else {
                    throw SyntaxFailure(pos: t.pos, message: "only functions can be called")
                }
                let args = try parseArguments()
                e = try node(.call(e, args), e.pos, depth: max(e.depth, args.map(\.depth).max() ?? 0) + 1)
            default:
                return e
            }
        }
    }

    mutating func parseArguments() throws(SyntaxFailure) -> [SyntaxExpr] {
        try expect(.lparen, "to open the argument list")
        var args: [SyntaxExpr] = []
        if try accept(.rparen) { return args }
        repeat {
            args.append(try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() })
            if args.count > Limits.maxCallArguments {
                throw SyntaxFailure(
                    pos: try peek().pos, message: "too many arguments (more than \(Limits.maxCallArguments))")
            }
        } while try accept(.comma)
        try expect(.rparen, "to close the argument list")
        return args
    }

    mutating func parsePrimary() throws(SyntaxFailure) -> SyntaxExpr {
        let t = try take()
        switch t.kind {
        case .int(let v): return try node(.literal(.int(v)), t.pos)
        case .intOverflow(let text):
            throw SyntaxFailure(pos: t.pos, message: "integer literal \(text) is out of the 64-bit range")
        case .float(let v): return try node(.literal(.float(v)), t.pos)
        case .string(let s): return try node(.literal(.string(s)), t.pos)
        case .bytes(let b): return try node(.literal(.bytes(b)), t.pos)
        case .identifier("true"): return try node(.literal(.bool(true)), t.pos)
        case .identifier("false"): return try node(.literal(.bool(false)), t.pos)
        case .identifier("null"): return try node(.literal(.null), t.pos)
        case .identifier(let name):
            if Parser.reserved.contains(name) {
                throw SyntaxFailure(pos: t.pos, message: "unexpected '\(name)' in an expression")
            }
            return try node(.identifier(name), t.pos)
        case .punct(.lparen):
            let e = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
            try expect(.rparen, "to close the parenthesis")
            return e
        case .punct(.lbracket):
            var items: [SyntaxExpr] = []
            var depth = 0
            while !(try isPunct(.rbracket)) {
                let item = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
                depth = max(depth, item.depth)
                items.append(item)
                if !(try accept(.comma)) { break }
            }
            try expect(.rbracket, "to close the list")
            return try node(.list(items), t.pos, depth: depth + 1)
        case .punct(.lbrace):
            var entries: [(SyntaxExpr, SyntaxExpr)] = []
            var depth = 0
            while !(try isPunct(.rbrace)) {
                let k = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
                try expect(.colon, "between a map key and its value")
                let v = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
                depth = max(depth, k.depth, v.depth)
                entries.append((k, v))
                if !(try accept(.comma)) { break }
            }
            try expect(.rbrace, "to close the map")
            return try node(.map(entries), t.pos, depth: depth + 1)
        case .punct(.slash):
            return try parsePathLiteral(t.pos)
        case .end:
            throw SyntaxFailure(pos: t.pos, message: "unexpected end of file in an expression")
        default:
            throw SyntaxFailure(pos: t.pos, message: "expected an expression, found \(t.describe)")
        }
    }

    /// `/databases/$(db)/documents/(default)/x`: scanned raw, right after the leading `/` token.
    mutating func parsePathLiteral(_ pos: SourcePos) throws(SyntaxFailure) -> SyntaxExpr {
        var parts: [SyntaxPathPart] = []
        var depth = 0
        while true {
            if lexer.peekByte() == 0x24, lexer.peekByte(1) == 0x28 {
                lexer.consumeByte(); lexer.consumeByte()
                let e = try nested { (p: inout Parser) throws(SyntaxFailure) in try p.parseExpression() }
                try expect(.rparen, "to close '$(' in the path")
                depth = max(depth, e.depth)
                parts.append(.expr(e))
            } else if lexer.peekByte() == 0x28 {
                lexer.consumeByte()
                let text = lexer.takeWhile(Lexer.isPathLiteralChar)
                guard lexer.peekByte() == 0x29, !text.isEmpty else {
                    throw SyntaxFailure(pos: lexer.pos, message: "expected '(name)' segment in the path")
                }
                lexer.consumeByte()
                parts.append(.text("(\(text))"))
            } else {
                let p = lexer.pos
                let text = lexer.takeWhile(Lexer.isPathLiteralChar)
                guard !text.isEmpty else { throw SyntaxFailure(pos: p, message: "expected a path segment after '/'") }
                parts.append(.text(text))
            }
            guard lexer.peekByte() == 0x2F else { break }
            lexer.consumeByte()
        }
        return try node(.path(parts), pos, depth: depth + 1)
    }
}

/// Type names accepted after `is`.
enum TypeTest: String, CaseIterable, Sendable {
    case bool, int, float, number, string, list, map, timestamp, duration, path, latlng, bytes, set, null
    case mapDiff = "map_diff"
}
