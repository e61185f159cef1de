/// Why `XMLReader` refused a document, and the byte offset where it stopped.
public struct XMLReaderError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// The document is longer than `Limits.maxBytes`.
        case tooLarge(limit: Int)
        /// Elements nest deeper than `Limits.maxDepth`.
        case tooDeep(limit: Int)
        /// The bytes are not UTF-8.
        case invalidUTF8
        /// A scalar XML 1.0 does not allow (a C0 control other than tab/LF/CR, U+FFFE, U+FFFF), written raw.
        case illegalCharacter(UInt32)
        /// The document ends inside markup or with elements still open (a truncated answer).
        case unexpectedEnd
        /// An end tag that does not close the innermost open element.
        case mismatchedEndTag(expected: String, found: String)
        /// `&name;` other than the five predefined entities.
        case undefinedEntity(String)
        /// `&#…;` or `&#x…;` that is not a number or names a scalar XML does not allow.
        case invalidCharacterReference
        /// A `<!DOCTYPE …>`: refused, so no entity definitions are ever expanded.
        case doctypeNotAllowed
        /// An XML declaration naming an encoding other than UTF-8.
        case unsupportedEncoding(String)
        /// The same attribute twice in one start tag.
        case duplicateAttribute(String)
        /// Nothing but whitespace, comments and processing instructions.
        case noRootElement
        /// Text or a second element after the root element's end tag.
        case contentAfterRoot
        /// Any other syntax error; the text says what was expected.
        case malformed(String)
    }

    let kind: Kind
    let offset: Int

    init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    public var description: String {
        let what =
            switch kind {
            case .tooLarge(let limit): "document larger than \(limit) bytes"
            case .tooDeep(let limit): "elements nested deeper than \(limit)"
            case .invalidUTF8: "not UTF-8"
            case .illegalCharacter(let value): "character U+\(String(value, radix: 16, uppercase: true)) not allowed"
            case .unexpectedEnd: "document ends early"
            case .mismatchedEndTag(let expected, let found): "end tag </\(found)> where </\(expected)> belongs"
            case .undefinedEntity(let name): "undefined entity &\(name);"
            case .invalidCharacterReference: "invalid character reference"
            case .doctypeNotAllowed: "document type declaration not allowed"
            case .unsupportedEncoding(let name): "encoding \(name) not supported (UTF-8 only)"
            case .duplicateAttribute(let name): "attribute \(name) given twice"
            case .noRootElement: "no root element"
            case .contentAfterRoot: "content after the root element"
            case .malformed(let expected): "expected \(expected)"
            }
        return "invalid XML at byte \(offset): \(what)"
    }
}
