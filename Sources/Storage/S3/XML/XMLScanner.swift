/// The recursive-descent half of `XMLReader.parse`, over bytes that `parse` has already checked are valid UTF-8 made
/// of XML characters: it steps through them byte by byte and decodes scalars only to check names. Elements under
/// construction are kept on an explicit stack, bounded by `maxDepth`; a scanner reads one document, once.
struct XMLScanner {
    let bytes: [UInt8]
    let maxDepth: Int
    var i = 0

    /// An element whose end tag has not been read yet; its text is collected as bytes.
    struct Open {
        var element: XMLReader.Element
        var text: [UInt8] = []
    }

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ kind: XMLReaderError.Kind, at offset: Int? = nil) -> XMLReaderError {
        XMLReaderError(kind, at: offset ?? i)
    }

    // MARK: document structure

    mutating func document() throws(XMLReaderError) -> XMLReader.Element {
        if starts(with: "\u{FEFF}") { i += 3 }
        if endsWithin("<?xml ") { throw fail(.unexpectedEnd) }
        if starts(with: "<?xml"), i + 5 < bytes.count, isSpace(bytes[i + 5]) || bytes[i + 5] == UInt8(ascii: "?") {
            try declaration()
        }
        try miscellany()
        guard i < bytes.count else { throw fail(.noRootElement) }
        if starts(with: "<!DOCTYPE") { throw fail(.doctypeNotAllowed) }
        if endsWithin("<!--") || endsWithin("<!DOCTYPE") || bytes[i...].elementsEqual("<".utf8) {
            throw fail(.unexpectedEnd)
        }
        guard bytes[i] == UInt8(ascii: "<"), isNameStart(scalar(at: i + 1).0) else {
            throw fail(.malformed("the root element"))
        }
        let root = try content()
        try miscellany()
        guard i == bytes.count else { throw fail(.contentAfterRoot) }
        return root
    }

    /// `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`, at the very start only.
    mutating func declaration() throws(XMLReaderError) {
        i += 5
        var sawVersion = false
        while true {
            let hadSpace = skipSpace()
            if starts(with: "?>") { i += 2; break }
            guard i < bytes.count else { throw fail(.unexpectedEnd) }
            guard hadSpace else { throw fail(.malformed("space between declaration attributes")) }
            let nameStart = i
            let name = try self.name()
            let value = try attributeValue()
            switch name {
            case "version" where !sawVersion:
                guard value.hasPrefix("1.") else { throw fail(.malformed("XML version 1.x"), at: nameStart) }
                sawVersion = true
            case "encoding" where sawVersion:
                guard value.bytesEqualIgnoringASCIICase("utf-8") else {
                    throw fail(.unsupportedEncoding(value), at: nameStart)
                }
            case "standalone" where sawVersion:
                break
            default:
                throw fail(.malformed("version, encoding or standalone in the XML declaration"), at: nameStart)
            }
        }
        guard sawVersion else { throw fail(.malformed("a version in the XML declaration")) }
    }

    /// Whitespace, comments and processing instructions, before and after the root element.
    mutating func miscellany() throws(XMLReaderError) {
        while true {
            skipSpace()
            if starts(with: "<!--") {
                try comment()
            } else if starts(with: "<?") {
                try processingInstruction()
            } else {
                return
            }
        }
    }

    /// The root element and everything in it, from the `<` of its start tag to the end of its end tag. The stack
    /// is empty only before that start tag, so text, references and CDATA always have an open element.
    mutating func content() throws(XMLReaderError) -> XMLReader.Element {
        var stack: [Open] = []
        while true {
            guard i < bytes.count else { throw fail(.unexpectedEnd) }
            if bytes[i] == UInt8(ascii: "<") {
                if starts(with: "</") {
                    let tagStart = i
                    i += 2
                    let name = try self.name()
                    skipSpace()
                    try expect(">")
                    guard var closed = stack.popLast() else { throw fail(.malformed("a start tag"), at: tagStart) }
                    guard closed.element.name.bytesEqual(name) else {
                        throw fail(.mismatchedEndTag(expected: closed.element.name, found: name), at: tagStart)
                    }
                    closed.element.text = String(decoding: closed.text, as: UTF8.self)
                    if stack.isEmpty { return closed.element }
                    stack[stack.count - 1].element.children.append(closed.element)
                } else if starts(with: "<!--") {
                    try comment()
                } else if starts(with: "<![CDATA[") {
                    try cdata(into: &stack[stack.count - 1].text)
                } else if starts(with: "<?") {
                    try processingInstruction()
                } else if starts(with: "<!") {
                    let cut = endsWithin("<!--") || endsWithin("<![CDATA[")
                    throw fail(cut ? .unexpectedEnd : .malformed("an element, comment or CDATA section"))
                } else {
                    guard stack.count < maxDepth else { throw fail(.tooDeep(limit: maxDepth)) }
                    let (element, isEmpty) = try startTag()
                    if !isEmpty {
                        stack.append(Open(element: element))
                    } else if stack.isEmpty {
                        return element
                    } else {
                        stack[stack.count - 1].element.children.append(element)
                    }
                }
            } else if bytes[i] == UInt8(ascii: "&") {
                try reference(into: &stack[stack.count - 1].text)
            } else {
                try characterData(into: &stack[stack.count - 1].text)
            }
        }
    }

    /// `<name attr="v" …>` or `<name …/>`: the element (attributes dropped) and whether it was empty.
    mutating func startTag() throws(XMLReaderError) -> (XMLReader.Element, isEmpty: Bool) {
        i += 1
        let element = XMLReader.Element(name: try name())
        var attributeNames: [String] = []
        while true {
            let hadSpace = skipSpace()
            guard i < bytes.count else { throw fail(.unexpectedEnd) }
            if bytes[i] == UInt8(ascii: ">") { i += 1; return (element, false) }
            if starts(with: "/>") { i += 2; return (element, true) }
            guard hadSpace else { throw fail(.malformed("space before an attribute")) }
            let nameStart = i
            let attribute = try name()
            if attributeNames.contains(where: { $0.bytesEqual(attribute) }) {
                throw fail(.duplicateAttribute(attribute), at: nameStart)
            }
            attributeNames.append(attribute)
            _ = try attributeValue()
        }
    }

    /// `S? = S? "value"` (or single quotes), references decoded; `<` is not allowed in a value.
    mutating func attributeValue() throws(XMLReaderError) -> String {
        skipSpace()
        try expect("=")
        skipSpace()
        guard i < bytes.count else { throw fail(.unexpectedEnd) }
        let quote = bytes[i]
        guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw fail(.malformed("a quoted attribute value"))
        }
        i += 1
        var value: [UInt8] = []
        while true {
            guard i < bytes.count else { throw fail(.unexpectedEnd) }
            switch bytes[i] {
            case quote:
                i += 1
                return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "<"):
                throw fail(.malformed("no '<' in an attribute value"))
            case UInt8(ascii: "&"):
                try reference(into: &value)
            default:
                value.append(bytes[i])
                i += 1
            }
        }
    }

    // MARK: character data

    /// Text up to the next `<` or `&`, with line ends normalized; `]]>` may not appear in it.
    mutating func characterData(into text: inout [UInt8]) throws(XMLReaderError) {
        while i < bytes.count, bytes[i] != UInt8(ascii: "<"), bytes[i] != UInt8(ascii: "&") {
            if bytes[i] == UInt8(ascii: "]"), starts(with: "]]>") {
                throw fail(.malformed("no ']]>' in character data"))
            }
            appendNormalizingLineEnd(into: &text)
        }
    }

    /// `&lt;` `&gt;` `&amp;` `&apos;` `&quot;`, `&#DDD;` or `&#xHHH;`, decoded into `text`.
    mutating func reference(into text: inout [UInt8]) throws(XMLReaderError) {
        let start = i
        i += 1
        while i < bytes.count, isReferenceByte(bytes[i]) { i += 1 }
        guard i < bytes.count else { throw fail(.unexpectedEnd, at: start) }
        guard bytes[i] == UInt8(ascii: ";"), i > start + 1 else {
            throw fail(.malformed("a reference ending in ';'"), at: start)
        }
        let body = bytes[(start + 1)..<i]
        i += 1
        if body.first == UInt8(ascii: "#") {
            let hex = body.dropFirst().first == UInt8(ascii: "x")
            let digits = body.dropFirst(hex ? 2 : 1)
            var value: UInt32 = 0
            for digit in digits {
                guard let d = digitValue(digit, hex: hex), value <= 0x10FFFF else {
                    throw fail(.invalidCharacterReference, at: start)
                }
                value = value * (hex ? 16 : 10) + d
            }
            guard !digits.isEmpty, XMLReader.isXMLCharacter(value), let scalar = Unicode.Scalar(value) else {
                throw fail(.invalidCharacterReference, at: start)
            }
            text.append(contentsOf: UTF8.encode(scalar)!)
            return
        }
        switch String(decoding: body, as: UTF8.self) {
        case "lt": text.append(UInt8(ascii: "<"))
        case "gt": text.append(UInt8(ascii: ">"))
        case "amp": text.append(UInt8(ascii: "&"))
        case "apos": text.append(UInt8(ascii: "'"))
        case "quot": text.append(UInt8(ascii: "\""))
        case let other: throw fail(.undefinedEntity(other), at: start)
        }
    }

    /// `<![CDATA[…]]>`: the text verbatim (line ends normalized).
    mutating func cdata(into text: inout [UInt8]) throws(XMLReaderError) {
        i += 9
        while !(i < bytes.count && bytes[i] == UInt8(ascii: "]") && starts(with: "]]>")) {
            guard i < bytes.count else { throw fail(.unexpectedEnd) }
            appendNormalizingLineEnd(into: &text)
        }
        i += 3
    }

    /// Appends the byte at `i` and moves past it; CR LF and a lone CR append one LF (XML 1.0 §2.11).
    mutating func appendNormalizingLineEnd(into text: inout [UInt8]) {
        if bytes[i] == 0x0D {
            text.append(0x0A)
            i += i + 1 < bytes.count && bytes[i + 1] == 0x0A ? 2 : 1
        } else {
            text.append(bytes[i])
            i += 1
        }
    }

    // MARK: skipped markup

    /// `<!-- … -->`; `--` may only end it.
    mutating func comment() throws(XMLReaderError) {
        i += 4
        while !(i < bytes.count && bytes[i] == UInt8(ascii: "-") && starts(with: "--")) {
            guard i < bytes.count else { throw fail(.unexpectedEnd) }
            i += 1
        }
        guard starts(with: "-->") else {
            throw fail(i + 2 >= bytes.count ? .unexpectedEnd : .malformed("no '--' inside a comment"))
        }
        i += 3
    }

    /// `<?target …?>`; the target `xml` (any case) is reserved for the declaration at the start.
    mutating func processingInstruction() throws(XMLReaderError) {
        let start = i
        i += 2
        let target = try name()
        if target.bytesEqualIgnoringASCIICase("xml") {
            throw fail(.malformed("an XML declaration only at the start"), at: start)
        }
        if !skipSpace(), !starts(with: "?>") { throw fail(.malformed("space after a processing instruction's target")) }
        while !(i < bytes.count && bytes[i] == UInt8(ascii: "?") && starts(with: "?>")) {
            guard i < bytes.count else { throw fail(.unexpectedEnd) }
            i += 1
        }
        i += 2
    }

    // MARK: lexical pieces

    /// An XML `Name`; the scalars are decoded only to check the name's characters.
    mutating func name() throws(XMLReaderError) -> String {
        let start = i
        while i < bytes.count {
            let (scalar, width) = scalar(at: i)
            guard i == start ? isNameStart(scalar) : isNameCharacter(scalar) else { break }
            i += width
        }
        guard i > start else { throw fail(i == bytes.count ? .unexpectedEnd : .malformed("a name")) }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    /// The scalar starting at `offset` and its width in bytes (the bytes are valid UTF-8).
    func scalar(at offset: Int) -> (UInt32, Int) {
        let lead = UInt32(bytes[offset])
        if lead < 0x80 { return (lead, 1) }
        let width = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        var value = lead & (0x7F >> UInt32(width))
        for k in 1..<width { value = value << 6 | UInt32(bytes[offset + k] & 0x3F) }
        return (value, width)
    }

    /// XML 1.0 (fifth edition) `NameStartChar`.
    func isNameStart(_ c: UInt32) -> Bool {
        switch c {
        case 0x3A, 0x41...0x5A, 0x5F, 0x61...0x7A, 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D,
            0x37F...0x1FFF, 0x200C...0x200D, 0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF,
            0xFDF0...0xFFFD, 0x10000...0xEFFFF:
            true
        default: false
        }
    }

    /// XML 1.0 (fifth edition) `NameChar`.
    func isNameCharacter(_ c: UInt32) -> Bool {
        switch c {
        case 0x2D, 0x2E, 0x30...0x39, 0xB7, 0x300...0x36F, 0x203F...0x2040: true
        default: isNameStart(c)
        }
    }

    func digitValue(_ byte: UInt8, hex: Bool) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// The bytes of an entity name or a character reference (`#`, `x`, digits): ASCII letters, digits and `#`.
    func isReferenceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "#"):
            true
        default: false
        }
    }

    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// Skips XML whitespace; whether there was any.
    @discardableResult
    mutating func skipSpace() -> Bool {
        let start = i
        while i < bytes.count, isSpace(bytes[i]) { i += 1 }
        return i > start
    }

    /// Whether the document ends inside `literal`: the bytes left are a proper prefix of it (a truncated answer).
    func endsWithin(_ literal: String) -> Bool {
        let left = bytes[i...]
        return !left.isEmpty && left.count < literal.utf8.count && literal.utf8.starts(with: left)
    }

    /// Whether the bytes at `i` are `literal`'s UTF-8 (no allocation: literals here are small strings).
    func starts(with literal: String) -> Bool {
        let utf8 = literal.utf8
        return i + utf8.count <= bytes.count && bytes[i..<(i + utf8.count)].elementsEqual(utf8)
    }

    mutating func expect(_ literal: String) throws(XMLReaderError) {
        guard starts(with: literal) else {
            throw fail(i + literal.utf8.count > bytes.count ? .unexpectedEnd : .malformed("'\(literal)'"))
        }
        i += literal.utf8.count
    }
}
