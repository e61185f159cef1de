/// Values of the text log format (`--log-format text`), for the access log and the event log alike.
///
/// Every value is written with JSON's string escapes (`JSONValue.appendEscaped`: `\"`, `\\`, `\n`, `\u0085`,
/// `\u2028`, `\u202e`, …), so neither a character that any common line splitter breaks on, nor a control or
/// bidirectional control character, reaches a line raw: one record is one line for every reader, and a value
/// reads back with any JSON string decoder. Both formats escape the same characters the same way.
public enum LogText {
    /// Appends `text` escaped, unquoted: for the positional parts of a line (message, method, path).
    public static func appendEscaped(_ text: String, into out: inout [UInt8]) {
        JSONValue.appendEscaped(text, into: &out)
    }

    /// Appends `value` as the value of a `key=value` pair: escaped, and quoted (`"…"`, a JSON string literal)
    /// when it holds a space, `"` or `=`, so the pairs of a line still split on spaces.
    public static func appendValue(_ value: String, into out: inout [UInt8]) {
        var value = value
        let quoted = value.withUTF8 { bytes in
            bytes.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") }
        }
        if quoted {
            JSONValue.encodeString(value, into: &out)
        } else {
            JSONValue.appendEscaped(value, into: &out)
        }
    }

    /// Appends ` key=value` (a leading space, the value as `appendValue` writes it).
    public static func appendField(_ key: StaticString, _ value: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(UInt8(ascii: "="))
        appendValue(value, into: &out)
    }
}
