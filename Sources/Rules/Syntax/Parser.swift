/// Recursive-descent parser for rules files. Stops at the first syntax error.
///
/// Recursion is bounded: `match` nesting by `Limits.maxMatchDepth`, expression nesting by
/// `Limits.maxExpressionDepth`, so hostile input cannot exhaust the stack.
struct Parser {
    var lexer: Lexer
    private var peeked: Token?
    var nestingDepth = 0

    init(source: String) { lexer = Lexer(source) }

    // MARK: Token plumbing

    mutating func peek() throws(SyntaxFailure) -> Token {
        if let peeked { return peeked }
        let t = try lexer.next()
        peeked = t
        return t
    }

    @discardableResult
    mutating func take() throws(SyntaxFailure) -> Token {
        let t = try peek()
        peeked = nil
        return t
    }

    mutating func isPunct(_ p: Token.Punct) throws(SyntaxFailure) -> Bool {
        if case .punct(let q) = try peek().kind, q == p { return true }
        return false
    }

    mutating func isWord(_ w: String) throws(SyntaxFailure) -> Bool {
        if case .identifier(let s) = try peek().kind, s == w { return true }
        return false
    }

    mutating func accept(_ p: Token.Punct) throws(SyntaxFailure) -> Bool {
        if try isPunct(p) { try take(); return true }
        return false
    }

    @discardableResult
    mutating func expect(_ p: Token.Punct, _ context: String) throws(SyntaxFailure) -> Token {
        let t = try peek()
        guard case .punct(let q) = t.kind, q == p else {
            throw SyntaxFailure(pos: t.pos, message: "expected '\(p.rawValue)' \(context), found \(t.describe)")
        }
        return try take()
    }

    mutating func expectIdentifier(_ context: String) throws(SyntaxFailure) -> (String, SourcePos) {
        let t = try peek()
        guard case .identifier(let s) = t.kind else {
            throw SyntaxFailure(pos: t.pos, message: "expected a name \(context), found \(t.describe)")
        }
        if Parser.reserved.contains(s) {
            throw SyntaxFailure(pos: t.pos, message: "'\(s)' is a reserved word and cannot be used as a name")
        }
        try take()
        return (s, t.pos)
    }

    static let reserved: Set<String> = [
        "true", "false", "null", "in", "is", "if", "let", "return", "function", "match", "allow", "service",
        "rules_version",
    ]

    // MARK: File structure

    mutating func parseFile() throws(SyntaxFailure) -> SyntaxFile {
        var file = SyntaxFile()
        var sawItem = false
        while true {
            let t = try peek()
            switch t.kind {
            case .end:
                guard file.service != nil else {
                    throw SyntaxFailure(pos: t.pos, message: "missing 'service firebase.storage { ... }' declaration")
                }
                return file
            case .identifier("rules_version"):
                try take()
                if file.versionPos != nil {
                    throw SyntaxFailure(pos: t.pos, message: "rules_version is declared more than once")
                }
                if sawItem {
                    throw SyntaxFailure(pos: t.pos, message: "rules_version must come before functions and the service")
                }
                try expect(.assign, "after rules_version")
                let v = try take()
                guard case .string(let s) = v.kind else {
                    throw SyntaxFailure(pos: v.pos, message: "rules_version must be a string: '1' or '2'")
                }
                switch s {
                case "1": file.version = 1
                case "2": file.version = 2
                default:
                    throw SyntaxFailure(pos: v.pos, message: "unsupported rules_version '\(s)'; expected '1' or '2'")
                }
                file.versionPos = t.pos
                _ = try accept(.semicolon)
            case .identifier("function"):
                sawItem = true
                file.functions.append(try parseFunction())
            case .identifier("service"):
                sawItem = true
                if file.service != nil {
                    throw SyntaxFailure(pos: t.pos, message: "only one service declaration is allowed per file")
                }
                file.service = try parseService()
            case .identifier("match"), .identifier("allow"):
                throw SyntaxFailure(
                    pos: t.pos, message: "\(t.describe) must be inside 'service firebase.storage { ... }'")
            default:
                throw SyntaxFailure(
                    pos: t.pos, message: "expected 'rules_version', 'service' or 'function', found \(t.describe)")
            }
        }
    }

    mutating func parseService() throws(SyntaxFailure) -> SyntaxService {
        let kw = try take()
        let (first, namePos) = try expectIdentifier("after 'service'")
        var name = first
        while try accept(.dot) {
            name += "." + (try expectIdentifier("in the service name").0)
        }
        guard name == "firebase.storage" else {
            let hint = name == "cloud.firestore" ? " (Firestore rules are not served by a storage gateway)" : ""
            throw SyntaxFailure(
                pos: namePos, message: "unsupported service '\(name)'; expected 'firebase.storage'\(hint)")
        }
        var service = SyntaxService(name: name, pos: kw.pos)
        try expect(.lbrace, "to open the service body")
        while true {
            let t = try peek()
            switch t.kind {
            case .punct(.rbrace):
                try take()
                return service
            case .identifier("function"): service.functions.append(try parseFunction())
            case .identifier("match"): service.matches.append(try parseMatch(depth: 1))
            case .identifier("allow"):
                throw SyntaxFailure(
                    pos: t.pos, message: "'allow' must be inside a 'match' block, not directly in the service body")
            case .end:
                throw SyntaxFailure(pos: t.pos, message: "unexpected end of file: missing '}' to close the service")
            default:
                throw SyntaxFailure(
                    pos: t.pos, message: "expected 'match', 'function' or '}' in the service body, found \(t.describe)")
            }
        }
    }

    mutating func parseMatch(depth: Int) throws(SyntaxFailure) -> SyntaxMatch {
        let kw = try take()
        if depth > Limits.maxMatchDepth {
            throw SyntaxFailure(pos: kw.pos, message: "match blocks are nested more than \(Limits.maxMatchDepth) deep")
        }
        var block = SyntaxMatch(pos: kw.pos)
        block.segments = try scanPattern()
        try expect(.lbrace, "to open the match block")
        while true {
            let t = try peek()
            switch t.kind {
            case .punct(.rbrace):
                try take()
                return block
            case .identifier("function"): block.functions.append(try parseFunction())
            case .identifier("match"): block.matches.append(try parseMatch(depth: depth + 1))
            case .identifier("allow"): block.allows.append(try parseAllow())
            case .end:
                throw SyntaxFailure(pos: t.pos, message: "unexpected end of file: missing '}' to close the match block")
            default:
                throw SyntaxFailure(
                    pos: t.pos,
                    message: "expected 'allow', 'match', 'function' or '}' in a match block, found \(t.describe)")
            }
        }
    }

    /// Scans `/seg/{x}/{y=**}...` directly from the source.
    mutating func scanPattern() throws(SyntaxFailure) -> [(PatternSegment, SourcePos)] {
        precondition(peeked == nil)
        try lexer.skipTrivia()
        guard lexer.peekByte() == 0x2F else {
            throw SyntaxFailure(pos: lexer.pos, message: "a match pattern must start with '/'")
        }
        var segments: [(PatternSegment, SourcePos)] = []
        while lexer.peekByte() == 0x2F {
            lexer.consumeByte()
            let segPos = lexer.pos
            if lexer.peekByte() == 0x7B {
                lexer.consumeByte()
                let name = lexer.takeWhile(Lexer.isIdentPart)
                guard let f = name.utf8.first, Lexer.isIdentStart(f) else {
                    throw SyntaxFailure(pos: segPos, message: "expected a wildcard name after '{'")
                }
                var segment = PatternSegment.single(name)
                if lexer.peekByte() == 0x3D {
                    lexer.consumeByte()
                    let stars = lexer.takeWhile { $0 == 0x2A }
                    switch stars {
                    case "*": segment = .single(name)
                    case "**": segment = .multi(name)
                    default:
                        throw SyntaxFailure(
                            pos: segPos, message: "expected '*' or '**' after '=' in wildcard {\(name)=...}")
                    }
                }
                guard lexer.peekByte() == 0x7D else {
                    throw SyntaxFailure(pos: lexer.pos, message: "expected '}' to close wildcard {\(name)")
                }
                lexer.consumeByte()
                if let b = lexer.peekByte(), Lexer.isPatternChar(b) {
                    throw SyntaxFailure(pos: lexer.pos, message: "a wildcard must be a whole path segment")
                }
                segments.append((segment, segPos))
            } else {
                let text = lexer.takeWhile(Lexer.isPatternChar)
                if text.isEmpty {
                    throw SyntaxFailure(pos: segPos, message: "empty path segment in match pattern")
                }
                if lexer.peekByte() == 0x7B {
                    throw SyntaxFailure(pos: lexer.pos, message: "a wildcard must be a whole path segment")
                }
                segments.append((.literal(text), segPos))
            }
        }
        return segments
    }

    mutating func parseAllow() throws(SyntaxFailure) -> SyntaxAllow {
        let kw = try take()
        var methods: [MethodWord] = []
        repeat {
            let t = try peek()
            guard case .identifier(let w) = t.kind, let m = MethodWord(rawValue: w) else {
                throw SyntaxFailure(
                    pos: t.pos,
                    message: "expected a method (read, write, get, list, create, update, delete), found \(t.describe)")
            }
            try take()
            methods.append(m)
        } while try accept(.comma)
        var condition: SyntaxExpr?
        var endOffset = lexer.offset
        if try accept(.colon) {
            let t = try peek()
            guard case .identifier("if") = t.kind else {
                throw SyntaxFailure(pos: t.pos, message: "Missing 'if' before conditional expression.")
            }
            try take()
            condition = try parseExpression()
            endOffset = try peek().start
        } else {
            endOffset = try peek().start
        }
        _ = try accept(.semicolon)
        // Whitespace runs folded on bytes (CR LF is one `Character`, equal to neither "\r" nor "\n").
        let raw = lexer.bytes[kw.start..<max(kw.start, endOffset)]
        let text = raw.split(whereSeparator: { $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D })
            .map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
        return SyntaxAllow(pos: kw.pos, methods: methods, condition: condition, text: text)
    }

    mutating func parseFunction() throws(SyntaxFailure) -> SyntaxFunction {
        let kw = try take()
        let (name, _) = try expectIdentifier("after 'function'")
        try expect(.lparen, "after the function name")
        var params: [(String, SourcePos)] = []
        if !(try accept(.rparen)) {
            repeat {
                params.append(try expectIdentifier("as a parameter"))
            } while try accept(.comma)
            try expect(.rparen, "to close the parameter list")
        }
        try expect(.lbrace, "to open the function body")
        var lets: [(String, SyntaxExpr, SourcePos)] = []
        while try isWord("let") {
            try take()
            let (n, p) = try expectIdentifier("after 'let'")
            try expect(.assign, "after the let name")
            let e = try parseExpression()
            try expect(.semicolon, "after a let binding")
            lets.append((n, e, p))
        }
        let r = try peek()
        guard case .identifier("return") = r.kind else {
            throw SyntaxFailure(pos: r.pos, message: "expected 'return' in the function body, found \(r.describe)")
        }
        try take()
        let body = try parseExpression()
        _ = try accept(.semicolon)
        try expect(.rbrace, "to close the function body (only let bindings and one return are allowed)")
        return SyntaxFunction(name: name, pos: kw.pos, params: params, lets: lets, body: body)
    }
}
