import PortcullisCore
import Testing

@Suite struct JSONReaderTests {
    /// Reads every member of a flat object as (name, value) pairs, in document order.
    private func members(_ text: String) throws(JSONParseError) -> [(String, JSONValue)] {
        var reader = JSONReader(Array(text.utf8))
        var seen: [(String, JSONValue)] = []
        try reader.readObject { reader, key throws(JSONParseError) in
            seen.append((key.string, try reader.readValue()))
        }
        try reader.finish()
        return seen
    }

    @Test func membersComeInDocumentOrderWithTheParsersValues() throws {
        let text = #" { "b" : 1, "a":"x\u00e9", "c":[1,{"d":null}], "e":{"f":true} } "#
        let read = try members(text)
        #expect(read.map(\.0) == ["b", "a", "c", "e"])
        let whole = try JSONValue.parse(text)
        for (key, value) in read { #expect(whole[key] == value) }
    }

    @Test func nestedObjectsAndSkippedMembers() throws {
        var reader = JSONReader(Array(#"{"keep":{"x":"1","y":2},"skip":[1,2,{"z":3}],"s":"v"}"#.utf8))
        var strings: [String: String] = [:]
        var skipped = 0
        try reader.readObject { reader, key throws(JSONParseError) in
            if key.string.bytesEqual("keep") {
                #expect(reader.nextIsObject)
                try reader.readObject { reader, inner throws(JSONParseError) in
                    // A non-string value reads as nil and is read past.
                    if let value = try reader.readString() { strings[inner.string] = value }
                }
            } else if key.string.bytesEqual("skip") {
                skipped += 1  // left unread: the reader skips it
            } else if let value = try reader.readString() {
                strings[key.string] = value
            }
        }
        try reader.finish()
        #expect(strings == ["x": "1", "s": "v"])
        #expect(skipped == 1)
    }

    @Test func emptyObjectAndErrorsLikeTheParsers() throws {
        #expect(try members("{}").isEmpty)
        for bad in [#"{"a":1"#, #"{"a" 1}"#, #"{"a":1,}"#, #"{"a":1} x"#, #"{"a":"\ud800"}"#, #"{"a":01}"#] {
            #expect(throws: JSONParseError.self, "\(bad)") { _ = try members(bad) }
            #expect(throws: JSONParseError.self, "\(bad)") { _ = try JSONValue.parse(bad) }
        }
        // Valid JSON, but not the object the reader was asked for.
        #expect(throws: JSONParseError.self) { _ = try members("[1]") }
    }

    /// Reads past every member of an object (what a decoder does with the members it does not keep).
    private func skipAll(_ text: String) throws(JSONParseError) -> Int {
        var reader = JSONReader(Array(text.utf8))
        var count = 0
        try reader.readObject { reader, _ throws(JSONParseError) in
            count += 1
            try reader.skipValue()
        }
        try reader.finish()
        return count
    }

    @Test func skippedValuesAreCheckedForGrammarLikeParsedOnes() throws {
        let good = #"""
            {"a":[1,-2.5e3,true,false,null,[],{}],"b":{"c":"plain","d":"caf\u00e9 \"q\" \n","e":"é"},"f":"",
             "g":[{"h":[[["deep"]]]}], "i" : 0 }
            """#
        #expect(try skipAll(good) == 5)
        _ = try JSONValue.parse(good)
        let bad: [[UInt8]] =
            [
                #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, "{\"a\":\"tab\there\"}", #"{"a":[1,]}"#, #"{"a":{"b" 1}}"#,
                #"{"a":{"b":1,}}"#, #"{"a":[1 2]}"#, #"{"a":tru}"#, #"{"a":01}"#, #"{"a":"open}"#, #"{"a":[1"#,
                #"{"a":{1:2}}"#,
            ].map { Array($0.utf8) } + [Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8)]  // invalid UTF-8
        for text in bad {
            var reader = JSONReader(text)
            #expect(throws: JSONParseError.self, "\(text)") {
                try reader.readObject { reader, _ throws(JSONParseError) in try reader.skipValue() }
                try reader.finish()
            }
            #expect(throws: JSONParseError.self, "\(text)") { _ = try JSONValue.parse(text) }
        }
        let depth = JSONValue.maxDepth
        let deep = #"{"a":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        #expect(throws: JSONParseError.self) { _ = try skipAll(deep) }
    }

    @Test func nestingIsBoundedAsForTheParser() {
        let deep =
            String(repeating: #"{"a":"#, count: JSONValue.maxDepth + 1) + "1"
            + String(repeating: "}", count: JSONValue.maxDepth + 1)
        #expect(throws: JSONParseError.self) { _ = try members(deep) }
    }

    /// A name arrives as its bytes: a slice of the text when it has no escape, the decoded bytes when it has one,
    /// and it is refused, as the parser refuses it, when it is not UTF-8.
    @Test func namesAreTheirUnescapedBytes() throws {
        var reader = JSONReader(Array(#"{"plain":1,"na\u006de":2,"caf\u00e9":3,"é":4,"":5}"#.utf8))
        var names: [[UInt8]] = []
        try reader.readObject { reader, key throws(JSONParseError) in
            names.append(Array(key.utf8))
            try reader.skipValue()
        }
        try reader.finish()
        #expect(names == ["plain", "name", "café", "é", ""].map { Array($0.utf8) })

        var invalid = JSONReader(Array(#"{""#.utf8) + [0xC3, 0x28] + Array(#"":1}"#.utf8))
        #expect(throws: JSONParseError.self) {
            try invalid.readObject { reader, _ throws(JSONParseError) in try reader.skipValue() }
        }
    }

    /// `readStringBytes` gives a string's bytes unescaped, and reads past a value that is not a string.
    @Test func stringValuesAsBytes() throws {
        var reader = JSONReader(Array(#"{"a":"12","b":"x\"y\u00e9","c":7,"d":"\ud83d\ude00"}"#.utf8))
        var values: [[UInt8]?] = []
        try reader.readObject { reader, _ throws(JSONParseError) in
            values.append(try reader.readStringBytes().map { Array($0) })
        }
        try reader.finish()
        #expect(values == [Array("12".utf8), Array("x\"yé".utf8), nil, Array("😀".utf8)])
    }
}
