public import PortcullisCore

/// The `Content-Type` an object's bytes are served with. Metadata keeps whatever type the uploader gave (Cloud
/// Storage stores `contentType` as free text and lists it back unchanged), but a header is a claim to every
/// cache and browser on the way: a value that is not an RFC 9110 media type (`type/subtype` tokens, then
/// `; name=value` parameters whose values are tokens or quoted strings) is served as
/// `application/octet-stream`, the type of unknown bytes, rather than forwarded for each reader to guess at.
public enum ServedContentType {
    public static let unknown = "application/octet-stream"

    public static func of(_ meta: ObjectMetadata) -> String {
        guard let stored = meta.contentType, isMediaType(stored) else { return unknown }
        return stored
    }

    /// `type "/" subtype *( OWS ";" OWS [ token "=" ( token / quoted-string ) ] )` (RFC 9110 §8.3.1, §5.6.6).
    public static func isMediaType(_ text: String) -> Bool {
        var scanner = Scanner(bytes: Array(text.utf8))
        guard scanner.token(), scanner.take(UInt8(ascii: "/")), scanner.token() else { return false }
        while true {
            scanner.whitespace()
            if scanner.atEnd { return true }
            guard scanner.take(UInt8(ascii: ";")) else { return false }
            scanner.whitespace()
            if scanner.atEnd { return true }
            // An empty parameter (`;;`) is allowed by the grammar's `[ parameter ]`.
            if scanner.peek == UInt8(ascii: ";") { continue }
            guard scanner.token(), scanner.take(UInt8(ascii: "=")) else { return false }
            guard scanner.quotedString() || scanner.token() else { return false }
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[index] }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// One or more `tchar`.
        mutating func token() -> Bool {
            let start = index
            while let byte = peek, Self.isTokenByte(byte) { index += 1 }
            return index > start
        }

        mutating func whitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        /// `DQUOTE *( qdtext / quoted-pair ) DQUOTE`; qdtext is HTAB, SP and visible bytes but `"` and `\`.
        mutating func quotedString() -> Bool {
            guard take(UInt8(ascii: "\"")) else { return false }
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"):
                    guard let escaped = peek, Self.isQuotable(escaped) else { return false }
                    index += 1
                case let other where Self.isQuotable(other): continue
                default: return false
                }
            }
            return false
        }

        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
            default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }

        /// HTAB, SP, visible ASCII and obs-text: what may stand inside quotes (escaped or not).
        static func isQuotable(_ byte: UInt8) -> Bool { byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
    }
}
