import Testing

@testable import PortcullisCore

@Suite struct JSONValueTests {
    @Test func parsesEveryKind() throws {
        let value = try JSONValue.parse(
            #" {"a": [1, -2.5, true, false, null, "x\u00e9\n"], "b": {"c": 9007199254740993}} "#)
        #expect(value["a"] == .array([.int(1), .double(-2.5), .bool(true), .bool(false), .null, .string("xé\n")]))
        #expect(value["b"]?["c"] == .int(9_007_199_254_740_993))
    }

    @Test func roundTripsThroughEncoding() throws {
        let original = JSONValue.object(["k": .string("q\"\\\u{1}"), "n": .array([.int(3), .double(0.5)])])
        #expect(try JSONValue.parse(original.encoded()) == original)
        #expect(original.encoded() == #"{"k":"q\"\\\u0001","n":[3,0.5]}"#)
    }

    @Test func surrogatePairsDecode() throws {
        #expect(try JSONValue.parse(#""\ud83d\ude00""#) == .string("😀"))
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "\"\\x\"", "\"\\ud800\"", "tru", "[1] 2", "\"a\nb\"",
        "{\"a\" 1}", "1e", "nul",
        // Numbers past a double's range: read as infinity, they could not be written back.
        "1e309", "-1e400", "[9221e30936854775808]",
    ])
    func rejectsMalformed(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test func refusesDeepNesting() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(deep) }
    }

    @Test func integralDoublesCountAsIntegers() {
        #expect(JSONValue.double(1.7e9).int64Value == 1_700_000_000)
        #expect(JSONValue.double(1.5).int64Value == nil)
        #expect(JSONValue.string("1").int64Value == nil)
    }
}
