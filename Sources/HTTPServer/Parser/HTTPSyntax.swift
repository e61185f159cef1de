/// Byte classes of RFC 9110/9112 grammar, table-driven so the parser's inner loops stay branch-light.
enum HTTPSyntax {
    /// `tchar`: the characters of a token (method, field name, transfer coding).
    private static let tokenTable: [Bool] = (0..<256).map { byte in
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(UInt8(byte))
        }
    }

    @inline(__always) static func isTokenByte(_ byte: UInt8) -> Bool { tokenTable[Int(byte)] }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `field-vchar / SP / HTAB`: visible ASCII, obs-text (≥ 0x80), space and tab. Excludes NUL, CR, LF, DEL
    /// and every other control character.
    @inline(__always) static func isFieldValueByte(_ byte: UInt8) -> Bool {
        (byte >= 0x20 && byte != 0x7F) || byte == 0x09
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    /// ASCII case-insensitive comparison of bytes with a lowercase literal.
    static func equalsLowercase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let literal = lowercase.utf8Start
        for i in 0..<bytes.count {
            let b = bytes[i]
            let folded = (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b
            if folded != literal[i] { return false }
        }
        return true
    }

    /// The elements of a comma-separated list value, each trimmed of optional whitespace.
    static func listElements(_ value: UnsafeRawBufferPointer, keepEmpty: Bool = false) -> [UnsafeRawBufferPointer] {
        var elements: [UnsafeRawBufferPointer] = []
        var start = 0
        for index in 0...value.count where index == value.count || value[index] == 0x2C {
            var s = start, e = index
            while s < e, value[s] == 0x20 || value[s] == 0x09 { s += 1 }
            while e > s, value[e - 1] == 0x20 || value[e - 1] == 0x09 { e -= 1 }
            if e > s || keepEmpty { elements.append(UnsafeRawBufferPointer(rebasing: value[s..<e])) }
            start = index + 1
        }
        return elements
    }
}
