import PortcullisCore
import Service
import Testing

@testable import Gateway

/// `QueryPieces` cuts a raw query on its bytes; these pin the cut every caller shares.
@Suite struct QueryPiecesTests {
    /// The pieces of `query` as text: `name=value`, or just `name` when the piece has no `=`.
    private func pieces(_ query: [UInt8]) -> [String] {
        query.withUnsafeBufferPointer { bytes in
            QueryPieces(bytes).map { piece in
                String(decoding: piece.name, as: UTF8.self)
                    + (piece.value.map { "=" + String(decoding: $0, as: UTF8.self) } ?? "")
            }
        }
    }

    private func pieces(_ query: String) -> [String] { pieces(Array(query.utf8)) }

    @Test(arguments: [
        ("", [""]),
        ("a", ["a"]),
        ("a=1", ["a=1"]),
        ("a=1&b=2", ["a=1", "b=2"]),
        ("&&", ["", "", ""]),
        ("&a=1&", ["", "a=1", ""]),
        ("a=b=c", ["a=b=c"]),
        ("=v", ["=v"]),
        ("a=", ["a="]),
        ("flag&x=1", ["flag", "x=1"]),
        ("n=a%26b&m=%3D", ["n=a%26b", "m=%3D"]),
        ("a=%&b=%zz", ["a=%", "b=%zz"]),
    ])
    func cutsAtAmpersandsAndFirstEquals(query: String, expected: [String]) {
        #expect(pieces(query) == expected)
    }

    /// The separators are found by a library search, not a byte walk: separators at every offset of queries up to
    /// 39 bytes long, next to the bytes one above and below `&`, cut as a byte-by-byte split does.
    @Test func cutsLikeAByteWalkAtEveryOffset() {
        func walked(_ query: [UInt8]) -> [String] {
            query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
        }
        for length in 0..<40 {
            for at in 0..<max(length, 1) {
                var query = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                if at < length { query[at] = UInt8(ascii: "&") }
                if at + 3 < length { query[at + 3] = UInt8(ascii: "=") }
                if at + 1 < length { query[at + 1] = 0x27 }  // "&" + 1
                if at > 0 { query[at - 1] = 0x25 }  // "&" - 1
                #expect(pieces(query) == walked(query))
            }
        }
        let name = String(repeating: "n", count: 17), value = String(repeating: "v", count: 23)
        #expect(
            pieces("\(name)=\(value)&\(value)=\(name)=x&\(name)") == ["\(name)=\(value)", "\(value)=\(name)=x", name])
        Array("\(name)=\(value)".utf8).withUnsafeBufferPointer { bytes in
            let only = Array(QueryPieces(bytes))
            #expect(only.count == 1 && only[0].name.count == 17 && only[0].value?.count == 23)
        }
        #expect(
            QueryPieces.firstIndex(of: UInt8(ascii: "&"), in: UnsafeBufferPointer(start: nil, count: 0), from: 0, to: 0)
                == 0)
    }

    @Test func nameAndValueAreSeparate() {
        Array("a=b=c&flag&=".utf8).withUnsafeBufferPointer { bytes in
            let all = Array(QueryPieces(bytes))
            #expect(all.count == 3)
            #expect(all[0].name.elementsEqual("a".utf8))
            #expect(all[0].value?.elementsEqual("b=c".utf8) == true)
            #expect(all[1].name.elementsEqual("flag".utf8))
            #expect(all[1].value == nil)
            #expect(all[2].name.isEmpty)
            #expect(all[2].value?.isEmpty == true)
        }
    }

    /// A `&` followed by a combining mark is one `Character` but still two pieces (bytes, not graphemes).
    @Test func combiningMarkAfterSeparatorStillCuts() {
        #expect(pieces("a=1&\u{301}b=2") == ["a=1", "\u{301}b=2"])
        #expect(pieces("a=\u{301}x") == ["a=\u{301}x"])
    }

    /// Bytes that are not UTF-8 are cut like any other: deciding what they mean is the decoder's job.
    @Test func invalidUTF8IsCutNotJudged() {
        let query: [UInt8] = [0x61, 0x3D, 0xFF, 0x26, 0xC3, 0x3D, 0x62]  // a=\xFF&\xC3=b
        query.withUnsafeBufferPointer { bytes in
            let all = Array(QueryPieces(bytes))
            #expect(all.count == 2)
            #expect(all[0].value?.elementsEqual([0xFF]) == true)
            #expect(all[1].name.elementsEqual([0xC3]))
        }
    }

    /// Pieces of a query inside a larger buffer (a target after its `?`) are indexed in that buffer.
    @Test func piecesOfASliceKeepTheBuffersIndices() {
        Array("/o?a=1&b".utf8).withUnsafeBufferPointer { bytes in
            let all = Array(QueryPieces(bytes[3...]))
            #expect(all.map { $0.name.startIndex } == [3, 7])
            #expect(all[0].value?.startIndex == 5)
        }
    }

    @Test func withBytesReadsNativeAndBridgedText() {
        let text = "x=1&y=2"
        #expect(text.withContiguousUTF8 { Array(QueryPieces($0)).count } == 2)
        #expect(text.dropFirst(4).withContiguousUTF8 { Array($0) } == Array("y=2".utf8))
    }

    @Test func parametersDecodeEachPiece() throws {
        let q = try QueryParameters(parsing: "a=%41%2b+b&flag&n%3D=v%3D&empty=&=onlyvalue")
        #expect(q.pairs.map(\.name) == ["a", "flag", "n=", "empty", ""])
        #expect(q.pairs.map(\.value) == ["A+ b", "", "v=", "", "onlyvalue"])
        #expect(try QueryParameters(parsing: "").pairs.isEmpty)
        #expect(try QueryParameters(parsing: "&&").pairs.isEmpty)
        #expect(try QueryParameters(parsing: nil).pairs.isEmpty)
    }

    @Test(arguments: ["a=%", "a=%4", "%=1", "a=%G1", "a=%C3", "a=%FF%FE", "%80=x"])
    func parametersRefuseMalformedOrNonUTF8Escapes(query: String) {
        #expect(throws: ServiceError.self) { try QueryParameters(parsing: Substring(query)) }
    }

    @Test func routerGateKeyTestMatchesWholeNamesOnly() {
        let keys = [Array("X-Goog-Signature".utf8)]
        #expect(GatewayRouter.names("a=1&X-Goog-Signature=s", anyOf: keys))
        #expect(GatewayRouter.names("X-Goog-Signature", anyOf: keys))
        #expect(!GatewayRouter.names("a=X-Goog-Signature&X-Goog-Signaturex=1", anyOf: keys))
        #expect(!GatewayRouter.names("", anyOf: keys))
    }

    @Test func percentDecodingOfBytes() {
        func decode(_ bytes: [UInt8], plusIsSpace: Bool) -> String? {
            bytes.withUnsafeBufferPointer { PercentEncoding.decode($0, plusIsSpace: plusIsSpace) }
        }
        #expect(decode(Array("a+b%2B".utf8), plusIsSpace: true) == "a b+")
        #expect(decode(Array("a+b%2B".utf8), plusIsSpace: false) == "a+b+")
        #expect(decode([], plusIsSpace: true) == "")
        #expect(decode([0xFF], plusIsSpace: false) == nil)
        #expect(decode(Array("%".utf8), plusIsSpace: false) == nil)
    }
}
