import Testing

@testable import Storage

/// The JSON columns read from their bytes: the direct split of a plain token list and the empty-map shortcut must
/// give exactly what the JSON parser gives for the same column, whatever the column holds.
@Suite struct MetadataCodingTests {
    static let lists: [[UInt8]] = [
        Array("[]".utf8), Array(#"["1cb13b0a-740a-4fac-8e4c-3a8dda6cb743"]"#.utf8), Array(#"["a","b","c"]"#.utf8),
        Array(#"[""]"#.utf8), Array(#"["",""]"#.utf8), Array(#"["caf\u00e9"]"#.utf8),
        Array(#"["café","e\#u{301}"]"#.utf8),
        Array(#"["a\"b"]"#.utf8), Array(#"["a\\b"]"#.utf8), Array(#"[ "a" ]"#.utf8), Array(#"["a",]"#.utf8),
        Array(#"["a""b"]"#.utf8), Array(#"["a"]x"#.utf8), Array(#"["a"#.utf8), Array("[".utf8), Array("]".utf8),
        Array(#"[1,"a"]"#.utf8), Array(#"["a",1]"#.utf8), Array(#"{"a":"b"}"#.utf8), Array("".utf8),
        Array(#"["tab\#there"]"#.utf8), [0x5B, 0x22, 0xE2, 0x22, 0x5D], [0x5B, 0x22, 0x61, 0xFF, 0x62, 0x22, 0x5D],
        [0x5B, 0x22, 0x01, 0x22, 0x5D],
    ]

    @Test(arguments: lists)
    func listFromBytesMatchesTheParser(_ column: [UInt8]) {
        let direct = column.withUnsafeBufferPointer { MetadataCoding.decodeList(bytes: $0) }
        let parsed = MetadataCoding.decodeList(String(decoding: column, as: UTF8.self))
        #expect(direct.map { Array($0.utf8) } == parsed.map { Array($0.utf8) })
    }

    @Test func plainListsAreSplitAndEncodedListsRoundTrip() {
        let tokens = ["1cb13b0a-740a-4fac-8e4c-3a8dda6cb743", "café", "e\u{301}", "a\"b", ""]
        let column = Array(MetadataCoding.encode(tokens).utf8)
        let decoded = column.withUnsafeBufferPointer { MetadataCoding.decodeList(bytes: $0) }
        #expect(decoded.map { Array($0.utf8) } == tokens.map { Array($0.utf8) })
        #expect(MetadataCoding.decodeList(bytes: nil).isEmpty)
    }

    static let maps: [[UInt8]] = [
        Array("{}".utf8), Array(#"{"k":"v"}"#.utf8), Array("{ }".utf8), Array("{".utf8), Array("[]".utf8),
    ]

    @Test(arguments: maps)
    func mapFromBytesMatchesTheParser(_ column: [UInt8]) {
        let direct = column.withUnsafeBufferPointer { MetadataCoding.decodeMap(bytes: $0) }
        let parsed = MetadataCoding.decodeMap(String(decoding: column, as: UTF8.self))
        #expect(direct.count == parsed.count)
        for (key, value) in parsed {
            #expect(
                direct.contains { Array($0.key.utf8) == Array(key.utf8) && Array($0.value.utf8) == Array(value.utf8) })
        }
        #expect(MetadataCoding.decodeMap(bytes: nil).isEmpty)
    }
}
