import Testing

@testable import Storage

/// The strict XML reader over literal bytes: what it decodes, and each way it refuses a document.
@Suite struct XMLReaderTests {
    typealias Element = XMLReader.Element

    func parse(_ text: String, limits: XMLReader.Limits = XMLReader.Limits()) throws(XMLReaderError) -> Element {
        try XMLReader.parse(Array(text.utf8), limits: limits)
    }

    /// The kind of refusal for `bytes`, or nil when they parse.
    func refusal(_ bytes: [UInt8], limits: XMLReader.Limits = XMLReader.Limits()) -> XMLReaderError.Kind? {
        do {
            _ = try XMLReader.parse(bytes, limits: limits)
            return nil
        } catch {
            return error.kind
        }
    }

    static let listing = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix>\
        <KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>\
        <Contents><Key>a%01b</Key><Size>3</Size><StorageClass>STANDARD</StorageClass></Contents>\
        <Contents><Key>c+d</Key><Size>0</Size></Contents>\
        <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>\
        </ListBucketResult>

        """

    @Test func readsAListingIntoATree() throws {
        let root = try parse(Self.listing)
        #expect(root.name == "ListBucketResult" && root.children.count == 9)
        #expect(root.text == "", "whitespace-free between children")
        let contents = root.children.filter { $0.name == "Contents" }
        #expect(contents.map { $0.children.map(\.text) } == [["a%01b", "3", "STANDARD"], ["c+d", "0"]])
        #expect(root.children[1] == Element(name: "Prefix"))
        #expect(root.children.last?.text == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
    }

    @Test func decodesPredefinedEntitiesAndCharacterReferences() throws {
        #expect(try parse("<K>a&amp;b&lt;c&gt;d&apos;e&quot;f</K>").text == "a&b<c>d'e\"f")
        #expect(try parse("<K>&#65;&#x42;&#x1F600;&#0000067;&#xe9;</K>").text == "AB\u{1F600}C\u{E9}")
        #expect(try parse("<K>tab&#9;cr&#13;lf&#10;</K>").text == "tab\tcr\rlf\n")
        #expect(
            try parse("<K>caf\u{E9} e\u{301} \u{10FFFF}</K>").text.utf8.elementsEqual(
                "caf\u{E9} e\u{301} \u{10FFFF}".utf8))
        #expect(try parse(#"<K a="&lt;&#65;" b='"'>x</K>"#) == Element(name: "K", text: "x"))
    }

    @Test func normalizesLineEndsInTextButNotInReferences() throws {
        #expect(try XMLReader.parse(Array("<K>a\r\nb\rc\n\r\r\nd&#13;\n</K>".utf8)).text == "a\nb\nc\n\n\nd\r\n")
        #expect(try XMLReader.parse(Array("<K><![CDATA[x\r\ny]]></K>".utf8)).text == "x\ny")
    }

    @Test func keepsCDATAVerbatimAndSkipsCommentsAndInstructions() throws {
        let root = try parse(
            """
            \u{FEFF}<?xml version='1.0' standalone='yes'?><!-- before --><?pi data?>
            <R><!-- inside - with a dash --><A><![CDATA[<b>&amp;</b>]]>!</A><?skip me?><B/><C x = "1" ></C ></R>
            <!-- after --> <?pi?>
            """)
        #expect(
            root
                == Element(
                    name: "R",
                    children: [
                        Element(name: "A", text: "<b>&amp;</b>!"), Element(name: "B"), Element(name: "C"),
                    ]))
    }

    @Test func namesAreKeptAsWrittenWithPrefixesAndNonASCII() throws {
        let root = try parse("<s3:Error xmlns:s3='urn:x'><s3:Code>c</s3:Code><Schl\u{FC}ssel-1.x_y/></s3:Error>")
        #expect(root.name == "s3:Error" && root.children.map(\.name) == ["s3:Code", "Schl\u{FC}ssel-1.x_y"])
    }

    @Test func mixedContentKeepsOnlyDirectText() throws {
        let root = try parse("<a>one<b>two</b>three</a>")
        #expect(root.text == "onethree" && root.children == [Element(name: "b", text: "two")])
    }

    /// Every proper prefix of a well-formed answer is refused — FoundationXML's `parse()` returned true for
    /// truncated XML on Linux. Once the root's start tag has begun, the refusal says the document ended early.
    @Test func refusesEveryTruncation() throws {
        let bytes = Array(Self.listing.utf8)
        let rootEnd = bytes.count - 1  // the final newline is optional
        let rootStart = Array(Self.listing.utf8).firstIndex(of: UInt8(ascii: "\n"))! + 1
        for length in 0..<rootEnd {
            let kind = refusal(Array(bytes[..<length]))
            #expect(kind != nil, "prefix of \(length) bytes parsed")
            if length > rootStart {
                #expect(kind == .unexpectedEnd, "prefix of \(length) bytes: \(String(describing: kind))")
            }
        }
        #expect(refusal(Array(bytes[..<rootEnd])) == nil)
    }

    static let refusals: [(String, [UInt8], XMLReaderError.Kind)] = [
        ("empty", [], .noRootElement),
        ("only a comment", Array("  <!-- c -->\n".utf8), .noRootElement),
        ("cut tag", Array("<a><b>x</b".utf8), .unexpectedEnd),
        ("cut reference", Array("<a>x&am".utf8), .unexpectedEnd),
        ("cut attribute", Array(#"<a k="v"#.utf8), .unexpectedEnd),
        ("cut comment", Array("<a><!-- x".utf8), .unexpectedEnd),
        ("cut comment opener", Array("<a><!-".utf8), .unexpectedEnd),
        ("cut CDATA", Array("<a><![CDATA[x]]".utf8), .unexpectedEnd),
        ("cut declaration", Array(#"<?xml version="1.0""#.utf8), .unexpectedEnd),
        ("mismatched", Array("<a><b></a></b>".utf8), .mismatchedEndTag(expected: "b", found: "a")),
        ("misspelled", Array("<Key>x</Kye>".utf8), .mismatchedEndTag(expected: "Key", found: "Kye")),
        ("case differs", Array("<key>x</Key>".utf8), .mismatchedEndTag(expected: "key", found: "Key")),
        ("stray end tag", Array("</a>".utf8), .malformed("the root element")),
        ("second root", Array("<a></a><b/>".utf8), .contentAfterRoot),
        ("text after root", Array("<a/>x".utf8), .contentAfterRoot),
        ("text before root", Array("x<a/>".utf8), .malformed("the root element")),
        ("undefined entity", Array("<a>&nbsp;</a>".utf8), .undefinedEntity("nbsp")),
        ("bare ampersand", Array("<a>AT&T</a>".utf8), .malformed("a reference ending in ';'")),
        ("unterminated entity", Array("<a>&amp</a>".utf8), .malformed("a reference ending in ';'")),
        ("reference to U+0001", Array("<a>&#1;</a>".utf8), .invalidCharacterReference),
        ("reference to NUL", Array("<a>&#x0;</a>".utf8), .invalidCharacterReference),
        ("reference to a surrogate", Array("<a>&#xD800;</a>".utf8), .invalidCharacterReference),
        ("reference to U+FFFE", Array("<a>&#xFFFE;</a>".utf8), .invalidCharacterReference),
        ("reference past U+10FFFF", Array("<a>&#x110000;</a>".utf8), .invalidCharacterReference),
        ("huge reference", Array("<a>&#99999999999999999999;</a>".utf8), .invalidCharacterReference),
        ("empty reference", Array("<a>&#;</a>".utf8), .invalidCharacterReference),
        ("uppercase X", Array("<a>&#X41;</a>".utf8), .invalidCharacterReference),
        ("raw U+0001", [0x3C, 0x61, 0x3E, 0x61, 0x01, 0x62, 0x3C, 0x2F, 0x61, 0x3E], .illegalCharacter(1)),
        ("raw NUL", [0x3C, 0x61, 0x3E, 0x00, 0x3C, 0x2F, 0x61, 0x3E], .illegalCharacter(0)),
        ("raw U+FFFF", Array("<a>\u{FFFF}</a>".utf8), .illegalCharacter(0xFFFF)),
        ("invalid UTF-8", [0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E], .invalidUTF8),
        ("overlong slash", [0x3C, 0x61, 0x3E, 0xC0, 0xAF, 0x3C, 0x2F, 0x61, 0x3E], .invalidUTF8),
        ("encoded surrogate", [0x3C, 0x61, 0x3E, 0xED, 0xA0, 0x80, 0x3C, 0x2F, 0x61, 0x3E], .invalidUTF8),
        ("doctype", Array("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>".utf8), .doctypeNotAllowed),
        (
            "Latin-1", Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><a/>"#.utf8),
            .unsupportedEncoding("ISO-8859-1")
        ),
        (
            "late declaration", Array(#"<a><?xml version="1.0"?></a>"#.utf8),
            .malformed("an XML declaration only at the start")
        ),
        ("duplicate attribute", Array(#"<a x="1" x="2"/>"#.utf8), .duplicateAttribute("x")),
        ("attributes run together", Array(#"<a x="1"y="2"/>"#.utf8), .malformed("space before an attribute")),
        ("unquoted attribute", Array("<a x=1/>".utf8), .malformed("a quoted attribute value")),
        ("'<' in an attribute", Array(#"<a x="<"/>"#.utf8), .malformed("no '<' in an attribute value")),
        ("']]>' in text", Array("<a>]]></a>".utf8), .malformed("no ']]>' in character data")),
        ("'--' in a comment", Array("<a><!-- x -- y --></a>".utf8), .malformed("no '--' inside a comment")),
        ("unknown markup", Array("<a><!ELEMENT a ANY></a>".utf8), .malformed("an element, comment or CDATA section")),
        ("bad name", Array("<1a/>".utf8), .malformed("the root element")),
    ]

    @Test func refusesMalformedDocuments() {
        for (label, bytes, kind) in Self.refusals {
            #expect(refusal(bytes) == kind, "\(label)")
        }
    }

    @Test func reportsWhereItStopped() {
        #expect(throws: XMLReaderError(.mismatchedEndTag(expected: "b", found: "a"), at: 6)) {
            try parse("<a><b></a></b>")
        }
        #expect(throws: XMLReaderError(.illegalCharacter(1), at: 4)) {
            try XMLReader.parse([0x3C, 0x61, 0x3E, 0x61, 0x01])
        }
        #expect(
            "\(XMLReaderError(.undefinedEntity("nbsp"), at: 3))" == "invalid XML at byte 3: undefined entity &nbsp;")
    }

    @Test func boundsDepthAndSize() {
        let limits = XMLReader.Limits(maxBytes: 64, maxDepth: 4)
        #expect(refusal(Array("<a><b><c><d/></c></b></a>".utf8), limits: limits) == nil)
        #expect(refusal(Array("<a><b><c><d><e/></d></c></b></a>".utf8), limits: limits) == .tooDeep(limit: 4))
        #expect(refusal(Array("<a>\(String(repeating: "x", count: 57))</a>".utf8), limits: limits) == nil)
        #expect(
            refusal(Array("<a>\(String(repeating: "x", count: 58))</a>".utf8), limits: limits) == .tooLarge(limit: 64))
        // The default depth is 32; a document 100,000 levels deep is refused as early and as cheaply as 33.
        func nested(_ depth: Int) -> [UInt8] {
            Array((String(repeating: "<e>", count: depth) + String(repeating: "</e>", count: depth)).utf8)
        }
        #expect(refusal(nested(32)) == nil)
        #expect(refusal(nested(33)) == .tooDeep(limit: 32))
        #expect(refusal(nested(100_000)) == .tooDeep(limit: 32))
    }
}
