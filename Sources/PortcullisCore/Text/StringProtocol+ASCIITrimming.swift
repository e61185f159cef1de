/// ASCII whitespace around a text, trimmed by bytes.
///
/// Never by `Character`: a space or a tab followed by a combining mark is one grapheme cluster, which equals
/// neither `" "` nor `"\t"`, and so is CR LF, which equals neither `"\r"` nor `"\n"`. Only ASCII bytes are
/// removed, so what is left is always whole scalars.
extension StringProtocol {
    /// This text without the spaces and tabs around it (RFC 9110's optional whitespace, around a header value or
    /// a list element).
    public func trimmingSpaces() -> String {
        trimmingASCII { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }

    /// This text without the spaces, tabs, CRs and LFs around it (a line of a file, a number in a rules string).
    public func trimmingASCIIWhitespace() -> String {
        trimmingASCII { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == 0x0D || $0 == 0x0A }
    }

    /// This text without the ASCII bytes around it for which `isTrimmed` holds.
    public func trimmingASCII(where isTrimmed: (UInt8) -> Bool) -> String {
        withContiguousUTF8 { bytes in
            var start = 0
            var end = bytes.count
            while start < end, bytes[start] < 0x80, isTrimmed(bytes[start]) { start += 1 }
            while end > start, bytes[end - 1] < 0x80, isTrimmed(bytes[end - 1]) { end -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
    }
}
