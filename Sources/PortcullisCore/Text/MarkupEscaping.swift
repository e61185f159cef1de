/// Text made safe inside XML or HTML: as element content and inside a double-quoted attribute value.
public enum MarkupEscaping {
    /// `text` with `&`, `<`, `>` and `"` written as entities (what S3 requests carry as XML and what an HTML
    /// attribute holds).
    ///
    /// Escaped byte by byte, never by `Character`: a combining mark after `<` or a prepended mark before it
    /// (U+0600) makes one grapheme cluster with it, and a `Character`-wise switch would let that markup character
    /// through raw — an object named `x\u{600}</Key>\u{301}` would have closed the element of a listing.
    public static func escaped(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8)
            default: out.append(byte)
            }
        }
        // Only ASCII bytes were replaced, by ASCII: the result is as well-formed UTF-8 as `text`.
        return String(decoding: out, as: UTF8.self)
    }
}
