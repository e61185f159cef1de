import Rules

/// Hints `portcullis rules check` adds under a compile error, for mistakes the parser cannot name itself.
///
/// A condition written with `=` (`if request.auth.uid = 'ops'`) stops the parser at the `=`, whose message
/// ("expected 'allow', … found '='") does not say what was meant: rules compare with `==`.
enum RulesHint {
    /// The hint for `diagnostic` in `source`, or nil: the error sits on a lone `=` (not `==`, `!=`, `<=`,
    /// `>=`) after an `if` on the same line.
    static func hint(for diagnostic: RulesDiagnostic, in source: [UInt8]) -> String? {
        let lines = source.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard diagnostic.line >= 1, diagnostic.line <= lines.count else { return nil }
        let line = Array(lines[diagnostic.line - 1])
        let index = diagnostic.column - 1
        guard index >= 0, index < line.count, line[index] == UInt8(ascii: "=") else { return nil }
        let next = index + 1 < line.count ? line[index + 1] : 0
        let previous = index > 0 ? line[index - 1] : 0
        guard next != UInt8(ascii: "="), !"=!<>".utf8.contains(previous) else { return nil }
        guard containsWord(Array("if".utf8), in: line[..<index]) else { return nil }
        return "\(diagnostic.file):\(diagnostic.line):\(diagnostic.column): hint: conditions compare with '==';"
            + " a single '=' is not an operator in rules"
    }

    private static func containsWord(_ word: [UInt8], in bytes: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(bytes)
        guard bytes.count >= word.count else { return false }
        for start in 0...(bytes.count - word.count) where Array(bytes[start..<(start + word.count)]) == word {
            let before = start == 0 ? UInt8(ascii: " ") : bytes[start - 1]
            let afterIndex = start + word.count
            let after = afterIndex < bytes.count ? bytes[afterIndex] : UInt8(ascii: " ")
            if !isIdentifier(before) && !isIdentifier(after) { return true }
        }
        return false
    }

    private static func isIdentifier(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
    }
}
