/// A syntax or compile problem at one position; collected into `RulesCompileError` by the compiler.
struct SyntaxFailure: Error {
    var pos: SourcePos
    var message: String
}

/// Splits rules source into tokens on demand.
///
/// Lexing is pull-based because the language is context sensitive: after `match`, and where an operand starts
/// with `/`, the parser scans raw path text with `scanPathPattern`/`scanPathLiteralSegment` instead of tokens.
struct Lexer {
    let bytes: [UInt8]
    private(set) var offset = 0
    private var line = 1
    private var lineStart = 0

    init(_ source: String) {
        bytes = Array(source.utf8)
        // A UTF-8 byte-order mark (common in files saved by Windows editors) is not part of the source.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            offset = 3
            lineStart = 3
        }
    }

    var pos: SourcePos { SourcePos(line: line, column: offset - lineStart + 1) }

    @inline(__always) func peekByte(_ ahead: Int = 0) -> UInt8? {
        offset + ahead < bytes.count ? bytes[offset + ahead] : nil
    }

    private mutating func advance() {
        if bytes[offset] == 0x0A {
            line += 1
            lineStart = offset + 1
        }
        offset += 1
    }

    /// Skips whitespace, `// line` and `/* block */` comments.
    mutating func skipTrivia() throws(SyntaxFailure) {
        while let b = peekByte() {
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C {
                advance()
            } else if b == 0x2F, peekByte(1) == 0x2F {
                while let c = peekByte(), c != 0x0A { advance() }
            } else if b == 0x2F, peekByte(1) == 0x2A {
                let start = pos
                advance(); advance()
                while true {
                    guard let c = peekByte() else {
                        throw SyntaxFailure(pos: start, message: "unterminated block comment")
                    }
                    if c == 0x2A, peekByte(1) == 0x2F { advance(); advance(); break }
                    advance()
                }
            } else {
                return
            }
        }
    }

    static func isIdentStart(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || b == 0x5F
    }

    static func isIdentPart(_ b: UInt8) -> Bool { isIdentStart(b) || (b >= 0x30 && b <= 0x39) }

    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    mutating func next() throws(SyntaxFailure) -> Token {
        try skipTrivia()
        let startOffset = offset
        var token = try lexToken()
        token.start = startOffset
        return token
    }

    private mutating func lexToken() throws(SyntaxFailure) -> Token {
        let start = pos
        guard let b = peekByte() else { return Token(kind: .end, pos: start, end: offset) }

        if Lexer.isIdentStart(b) {
            // String prefixes: b'..' (bytes), r'..' (raw), and combinations.
            if b == 0x62 || b == 0x42 || b == 0x72 || b == 0x52 {
                var k = 1
                var isBytes = b == 0x62 || b == 0x42
                var isRaw = b == 0x72 || b == 0x52
                if let c = peekByte(1), c == 0x62 || c == 0x42 || c == 0x72 || c == 0x52,
                    (c == 0x62 || c == 0x42) != isBytes
                {
                    isBytes = true; isRaw = true; k = 2
                }
                if let q = peekByte(k), q == 0x27 || q == 0x22 {
                    for _ in 0..<k { advance() }
                    let raw = try scanQuoted(raw: isRaw, start: start)
                    if isBytes { return Token(kind: .bytes(raw), pos: start, end: offset) }
                    return Token(kind: .string(Lexer.decodeUTF8(raw)), pos: start, end: offset)
                }
            }
            let s = offset
            while let c = peekByte(), Lexer.isIdentPart(c) { advance() }
            return Token(kind: .identifier(String(decoding: bytes[s..<offset], as: UTF8.self)), pos: start, end: offset)
        }
        if Lexer.isDigit(b) { return try scanNumber(start: start) }
        if b == 0x27 || b == 0x22 {
            let raw = try scanQuoted(raw: false, start: start)
            return Token(kind: .string(Lexer.decodeUTF8(raw)), pos: start, end: offset)
        }
        let two: Token.Punct? =
            switch (b, peekByte(1)) {
            case (0x3D, 0x3D): .eq
            case (0x21, 0x3D): .ne
            case (0x3C, 0x3D): .le
            case (0x3E, 0x3D): .ge
            case (0x26, 0x26): .and
            case (0x7C, 0x7C): .or
            default: nil
            }
        if let two {
            advance(); advance()
            return Token(kind: .punct(two), pos: start, end: offset)
        }
        let one: Token.Punct? =
            switch b {
            case 0x7B: .lbrace
            case 0x7D: .rbrace
            case 0x28: .lparen
            case 0x29: .rparen
            case 0x5B: .lbracket
            case 0x5D: .rbracket
            case 0x2C: .comma
            case 0x3B: .semicolon
            case 0x3A: .colon
            case 0x2E: .dot
            case 0x3F: .question
            case 0x3D: .assign
            case 0x3C: .lt
            case 0x3E: .gt
            case 0x21: .not
            case 0x2B: .plus
            case 0x2D: .minus
            case 0x2A: .star
            case 0x2F: .slash
            case 0x25: .percent
            default: nil
            }
        if let one {
            advance()
            return Token(kind: .punct(one), pos: start, end: offset)
        }
        if b == 0x26 || b == 0x7C {
            throw SyntaxFailure(
                pos: start,
                message:
                    "unexpected '\(Character(Unicode.Scalar(b)))'; did you mean '\(Character(Unicode.Scalar(b)))\(Character(Unicode.Scalar(b)))'?"
            )
        }
        let shown = b < 0x80 && b >= 0x20 ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x\(String(b, radix: 16))"
        throw SyntaxFailure(pos: start, message: "unexpected character \(shown)")
    }

    private mutating func scanNumber(start: SourcePos) throws(SyntaxFailure) -> Token {
        let s = offset
        while let c = peekByte(), Lexer.isDigit(c) { advance() }
        var isFloat = false
        if peekByte() == 0x2E, let c = peekByte(1), Lexer.isDigit(c) {
            isFloat = true
            advance()
            while let c = peekByte(), Lexer.isDigit(c) { advance() }
        }
        if let e = peekByte(), e == 0x65 || e == 0x45 {
            var k = 1
            if let sign = peekByte(1), sign == 0x2B || sign == 0x2D { k = 2 }
            if let d = peekByte(k), Lexer.isDigit(d) {
                isFloat = true
                for _ in 0..<k { advance() }
                while let c = peekByte(), Lexer.isDigit(c) { advance() }
            }
        }
        if let c = peekByte(), Lexer.isIdentStart(c) {
            throw SyntaxFailure(pos: pos, message: "unexpected '\(Character(Unicode.Scalar(c)))' after number")
        }
        let text = String(decoding: bytes[s..<offset], as: UTF8.self)
        if isFloat {
            guard let v = Double(text), v.isFinite else {
                throw SyntaxFailure(pos: start, message: "invalid float literal \(text)")
            }
            return Token(kind: .float(v), pos: start, end: offset)
        }
        if let v = Int64(text) { return Token(kind: .int(v), pos: start, end: offset) }
        return Token(kind: .intOverflow(text), pos: start, end: offset)
    }

    /// Scans a quoted literal starting at the quote; returns its bytes with escapes resolved.
    private mutating func scanQuoted(raw: Bool, start: SourcePos) throws(SyntaxFailure) -> [UInt8] {
        let quote = bytes[offset]
        advance()
        var out: [UInt8] = []
        while true {
            guard let c = peekByte() else { throw SyntaxFailure(pos: start, message: "unterminated string literal") }
            if c == 0x0A { throw SyntaxFailure(pos: start, message: "unterminated string literal (newline in string)") }
            if c == quote { advance(); return out }
            if c != 0x5C || raw {
                out.append(c)
                advance()
                continue
            }
            let escPos = pos
            advance()
            guard let e = peekByte() else { throw SyntaxFailure(pos: start, message: "unterminated string literal") }
            advance()
            switch e {
            case 0x5C: out.append(0x5C)
            case 0x27: out.append(0x27)
            case 0x22: out.append(0x22)
            case 0x60: out.append(0x60)
            case 0x3F: out.append(0x3F)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x76: out.append(0x0B)
            case 0x61: out.append(0x07)
            case 0x78, 0x58:
                out.append(UInt8(try hexDigits(2, escPos)))
            case 0x75:
                try appendScalar(try hexDigits(4, escPos), to: &out, escPos)
            case 0x55:
                try appendScalar(try hexDigits(8, escPos), to: &out, escPos)
            case 0x30...0x33:
                var v = UInt32(e - 0x30)
                for _ in 0..<2 {
                    guard let d = peekByte(), d >= 0x30, d <= 0x37 else {
                        throw SyntaxFailure(pos: escPos, message: "octal escape needs exactly 3 digits")
                    }
                    v = v * 8 + UInt32(d - 0x30)
                    advance()
                }
                out.append(UInt8(v))
            default:
                let shown = e < 0x80 && e >= 0x20 ? String(Character(Unicode.Scalar(e))) : "?"
                throw SyntaxFailure(
                    pos: escPos,
                    message:
                        "invalid escape sequence '\\\(shown)' (write '\\\\\(shown)' for a literal backslash, e.g. in a regex)"
                )
            }
        }
    }

    private mutating func hexDigits(_ n: Int, _ escPos: SourcePos) throws(SyntaxFailure) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<n {
            guard let d = peekByte() else { throw SyntaxFailure(pos: escPos, message: "truncated hex escape") }
            let x: UInt32
            switch d {
            case 0x30...0x39: x = UInt32(d - 0x30)
            case 0x41...0x46: x = UInt32(d - 0x37)
            case 0x61...0x66: x = UInt32(d - 0x57)
            default: throw SyntaxFailure(pos: escPos, message: "hex escape needs exactly \(n) hex digits")
            }
            v = v << 4 | x
            advance()
        }
        return v
    }

    private func appendScalar(_ v: UInt32, to out: inout [UInt8], _ escPos: SourcePos) throws(SyntaxFailure) {
        guard let u = Unicode.Scalar(v) else {
            throw SyntaxFailure(pos: escPos, message: "invalid Unicode code point in escape")
        }
        out.append(contentsOf: Array(String(Character(u)).utf8))
    }

    static func decodeUTF8(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Raw path scanning

    /// Whether a byte may appear in a literal segment of a `match` pattern (anything but `/ { }` and whitespace).
    static func isPatternChar(_ b: UInt8) -> Bool {
        !(b == 0x2F || b == 0x7B || b == 0x7D || b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C)
    }

    /// Bytes allowed in a text segment of a path literal in an expression (`/databases/(default)/x.y`).
    static func isPathLiteralChar(_ b: UInt8) -> Bool {
        isIdentPart(b) || b == 0x2D || b == 0x2E || b == 0x7E || b == 0x25 || b == 0x40 || b == 0x2B || b >= 0x80
    }

    mutating func consumeByte() { advance() }

    mutating func takeWhile(_ predicate: (UInt8) -> Bool) -> String {
        let s = offset
        while let c = peekByte(), predicate(c) { advance() }
        return String(decoding: bytes[s..<offset], as: UTF8.self)
    }
}
