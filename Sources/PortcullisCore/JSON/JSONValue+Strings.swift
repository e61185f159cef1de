/// The JSON string encoder: every JSON text the gateway writes, and every value of both log formats, is escaped here.
///
/// Escaped, besides `"` and `\`:
/// - every control character: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F, NEL among them), as
///   `\n`, `\r`, `\t` or `\u00XX`;
/// - the line and paragraph separators U+2028 and U+2029, as `\u2028`, `\u2029`;
/// - the bidirectional controls (Unicode's `Bidi_Control` set: U+061C, U+200E, U+200F, U+202A–U+202E,
///   U+2066–U+2069) and U+FEFF (byte-order mark, zero-width no-break space), as `\uXXXX`.
///
/// JSON allows all but the C0 controls raw, but line splitters do not agree on what ends a line: Python's
/// `str.splitlines()` breaks on VT, FF, FS, GS, RS, NEL, LS and PS as well as CR and LF, JavaScript on LS and
/// PS, many log shippers on NEL. Escaped, a log line or an NDJSON record is one line for every reader, so a
/// crafted object name cannot end a record early or forge the next one. The bidirectional controls are escaped
/// because a terminal shows a line holding them in an order other than its bytes' (a forged record need not
/// split the line to deceive a reader), and U+FEFF because readers drop it unseen. The other format characters
/// (soft hyphen, zero-width joiner inside emoji, tag characters of flags) neither break nor reorder a line and
/// stay as they are, as does every other printable character.
extension JSONValue {
    /// Appends `s` as a JSON string literal (see the type's escaping rules above).
    public static func encodeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendEscaped(s, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends the escaped contents of `s` without the quotes: one piece of a string literal written in parts,
    /// or a value of the text log format (`LogText`).
    public static func appendEscaped(_ s: String, into out: inout [UInt8]) {
        // Copies runs of bytes that need no escape in one append (the common case is a single run); no
        // per-call allocation. Hot: metadata JSON and every access-log line go through here. A printable ASCII
        // byte costs three comparisons; a non-ASCII character costs one look at its lead byte, and one more at
        // its continuation bytes when that lead byte could begin an escaped scalar (0xC2, 0xD8, 0xE2, 0xEF).
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            var i = 0
            while i < bytes.count {
                let byte = bytes[i]
                let scalar: UInt32
                let length: Int
                if byte &- 0x20 < 0x5F {  // printable ASCII, U+0020–U+007E
                    guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                        i += 1
                        continue
                    }
                    (scalar, length) = (UInt32(byte), 1)
                } else if byte < 0x80 {  // C0 or DEL
                    (scalar, length) = (UInt32(byte), 1)
                } else {
                    guard let escaped = escapedScalar(bytes, at: i) else {
                        // `i` is at a lead byte (Swift strings are valid UTF-8): skip the whole sequence.
                        i += byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                        continue
                    }
                    (scalar, length) = escaped
                }
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
                appendEscape(scalar, into: &out)
                i += length
                runStart = i
            }
            if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        }
    }

    /// The non-ASCII scalar whose UTF-8 sequence starts at `i` and its length in bytes, when it is one the
    /// encoder escapes; nil otherwise.
    @inline(__always)
    private static func escapedScalar(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> (UInt32, Int)? {
        switch bytes[i] {
        case 0xC2:  // U+0080–U+00BF: the C1 controls are U+0080–U+009F
            guard i + 1 < bytes.count, bytes[i + 1] < 0xA0 else { return nil }
            return (UInt32(bytes[i + 1]), 2)
        case 0xD8:  // U+0600–U+063F: U+061C ARABIC LETTER MARK
            guard i + 1 < bytes.count, bytes[i + 1] == 0x9C else { return nil }
            return (0x061C, 2)
        case 0xE2:  // U+2000–U+2FFF
            guard i + 2 < bytes.count else { return nil }
            let scalar = 0x2000 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F)
            switch scalar {
            case 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: return (scalar, 3)
            default: return nil
            }
        case 0xEF:  // U+F000–U+FFFF: U+FEFF
            guard i + 2 < bytes.count, bytes[i + 1] == 0xBB, bytes[i + 2] == 0xBF else { return nil }
            return (0xFEFF, 3)
        default:
            return nil
        }
    }

    /// `\"`, `\\`, `\n`, `\r`, `\t`, or `\uXXXX` (every escaped scalar is in the Basic Multilingual Plane).
    private static func appendEscape(_ scalar: UInt32, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch scalar {
        case 0x22: out.append(UInt8(ascii: "\""))
        case 0x5C: out.append(UInt8(ascii: "\\"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            out.append(UInt8(ascii: "u"))
            for shift in stride(from: 12, through: 0, by: -4) {
                out.append(hex.utf8Start[Int(scalar >> UInt32(shift) & 15)])
            }
        }
    }
}
