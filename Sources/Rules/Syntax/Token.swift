/// A 1-based line and column (in UTF-8 bytes) inside the rules source.
struct SourcePos: Sendable, Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var description: String { "\(line):\(column)" }
}

/// One lexical token. Keywords are ordinary identifiers; the parser gives them meaning by position.
struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case int(Int64)
        /// An integer literal too large for Int64; only legal as the operand of unary minus (`-9223372036854775808`).
        case intOverflow(String)
        case float(Double)
        case string(String)
        case bytes([UInt8])
        case punct(Punct)
        case end
    }

    enum Punct: String, Sendable, Equatable {
        case lbrace = "{", rbrace = "}", lparen = "(", rparen = ")", lbracket = "[", rbracket = "]"
        case comma = ",", semicolon = ";", colon = ":", dot = ".", question = "?"
        case assign = "=", eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">="
        case and = "&&", or = "||", not = "!"
        case plus = "+", minus = "-", star = "*", slash = "/", percent = "%"
    }

    var kind: Kind
    var pos: SourcePos
    /// Byte offset of the token's first byte.
    var start: Int = 0
    /// Byte offset just past the token, so the parser can switch to raw path scanning right after it.
    var end: Int

    var describe: String {
        switch kind {
        case .identifier(let s): "'\(s)'"
        case .int(let v): "'\(v)'"
        case .intOverflow(let s): "'\(s)'"
        case .float(let v): "'\(v)'"
        case .string: "string literal"
        case .bytes: "bytes literal"
        case .punct(let p): "'\(p.rawValue)'"
        case .end: "end of file"
        }
    }
}
