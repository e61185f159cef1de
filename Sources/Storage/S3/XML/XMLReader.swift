/// A strict reader for the small XML documents S3 answers with (listings, multipart results, errors): the whole
/// document in, a tree of elements out, or a typed refusal.
///
/// What it reads: an optional UTF-8 byte order mark and XML declaration (version 1.0; an `encoding`, if named,
/// must be UTF-8), comments and processing instructions (skipped), one root element, start/end/empty tags,
/// attributes (checked for well-formedness, then dropped), character data with the five predefined entities
/// and decimal/hex character references decoded, CDATA sections (their text, verbatim), and XML 1.0 line-end
/// normalization (CR LF and lone CR become LF, as every conforming parser reports them).
///
/// What it refuses, with an `XMLReaderError`: bytes that are not UTF-8; characters XML 1.0 does not allow
/// (C0 controls other than tab/LF/CR, surrogates, U+FFFE/U+FFFF), written raw or as a reference; an undefined
/// entity; a document type declaration (S3 sends none, so no entity definitions need expanding); a mismatched,
/// missing or stray end tag; a document cut short (a truncated answer is an error, never a shorter listing);
/// anything but comments, PIs and whitespace after the root; more than `Limits.maxBytes` bytes or elements
/// nested deeper than `Limits.maxDepth`.
///
/// Namespaces are not processed: an element's name is its qualified name as written (S3 uses a default
/// namespace, so its names carry no prefix). Not a streaming parser: the caller holds the whole answer already. Public: the S3 surface reads its request
/// documents (DeleteObjects, CompleteMultipartUpload) with it too.
public enum XMLReader {
    /// Bounds on what one document may cost.
    public struct Limits: Sendable {
        /// Largest document accepted, in bytes (S3Backend collects at most 16 MiB of an answer).
        public var maxBytes = 16 << 20
        /// Deepest element nesting accepted; the root is depth 1 (S3's answers nest 3 deep).
        public var maxDepth = 32

        public init(maxBytes: Int = 16 << 20, maxDepth: Int = 32) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
        }
    }

    /// One element: its qualified name, the character data directly inside it (text, references and CDATA, in
    /// document order; a child's text stays with the child) and its child elements in order.
    public struct Element: Equatable, Sendable {
        public var name: String
        public var text: String
        public var children: [Element]

        public init(name: String, text: String = "", children: [Element] = []) {
            self.name = name
            self.text = text
            self.children = children
        }
    }

    /// The root element of `bytes`, or the first reason the document is not well-formed XML.
    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(XMLReaderError) -> Element {
        guard bytes.count <= limits.maxBytes else { throw XMLReaderError(.tooLarge(limit: limits.maxBytes), at: 0) }
        try checkCharacters(bytes)
        var scanner = XMLScanner(bytes: bytes, maxDepth: limits.maxDepth)
        return try scanner.document()
    }

    /// Every scalar of `bytes` is well-formed UTF-8 and an XML 1.0 `Char`; afterwards the scanner may step
    /// through the bytes without decoding them again.
    private static func checkCharacters(_ bytes: [UInt8]) throws(XMLReaderError) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                guard isXMLCharacter(scalar.value) else {
                    throw XMLReaderError(.illegalCharacter(scalar.value), at: offset)
                }
                offset += encoded.count
            case .error:
                throw XMLReaderError(.invalidUTF8, at: offset)
            case .emptyInput:
                return
            }
        }
    }

    /// XML 1.0 `Char`: tab, LF, CR, U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF.
    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }
}
