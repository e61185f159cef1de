import Testing

@testable import HTTPServer

@Suite struct HTTPHeadersTests {
    private func head(_ text: String, split: Int? = nil) throws -> HTTPRequestHead {
        var parser = HTTPRequestParser()
        let bytes = Array(text.utf8)
        let size = split ?? bytes.count
        var events: [HTTPParserEvent] = []
        for start in stride(from: 0, to: bytes.count, by: size) {
            events += parser.feed(Array(bytes[start..<min(start + size, bytes.count)]))
        }
        for case .head(let head) in events { return head }
        Issue.record("no head in \(events)")
        throw CancellationError()
    }

    /// A parsed head keeps every field as ranges of one buffer, in order, with the case it arrived in; values
    /// come back as `String`s or as byte slices, whichever way a field line was split across reads.
    @Test(arguments: [nil, 1, 7])
    func parsedFieldsAsBytesAndStrings(split: Int?) throws {
        let token = String(repeating: "t", count: 800)
        let head = try head(
            "GET /o HTTP/1.1\r\nHost: example.test\r\nauthorization: Bearer \(token)\r\n"
                + "X-Multi: a\r\nx-multi: b\r\nEmpty:\r\n\r\n", split: split)
        let headers = head.headers
        #expect(headers.count == 5)
        #expect(headers["AUTHORIZATION"] == "Bearer \(token)")
        #expect(headers.valueBytes("Authorization").map(Array.init) == Array("Bearer \(token)".utf8))
        #expect(headers.valueBytes("Host").map(Array.init) == Array("example.test".utf8))
        #expect(headers.values("X-MULTI") == ["a", "b"])
        #expect(headers.values("X-MULTI", equal: ["a", "b"]) && headers.values("Missing", equal: []))
        for other in [["a"], ["b", "a"], ["a", "b", "c"], ["a", "B"], ["a", "b "], ["a,b"], []] {
            #expect(!headers.values("X-MULTI", equal: other))
        }
        #expect(headers["Empty"] == "")
        #expect(headers.valueBytes("Empty")?.isEmpty == true)
        #expect(headers["Missing"] == nil && headers.valueBytes("Missing") == nil && !headers.contains("Missing"))
        #expect(headers.map(\.name) == ["Host", "authorization", "X-Multi", "x-multi", "Empty"])
        #expect(headers.fields.map(\.value) == ["example.test", "Bearer \(token)", "a", "b", ""])
    }

    /// Editing: `set` replaces every field of a name, `remove` drops them and keeps the others intact.
    @Test func setAndRemove() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "X-A": "1"]
        headers.add("x-a", "2")
        headers.add("Cache-Control", "no-store")
        headers.set("X-A", "3")
        #expect(
            headers.fields.map { "\($0.name)=\($0.value)" } == [
                "Content-Type=text/plain", "Cache-Control=no-store", "X-A=3",
            ])
        headers.remove("content-type")
        #expect(headers.fields.map { "\($0.name)=\($0.value)" } == ["Cache-Control=no-store", "X-A=3"])
        #expect(headers.valueBytes("cache-control").map(Array.init) == Array("no-store".utf8))
        headers.remove("X-A")
        headers.remove("nothing")
        #expect(headers.count == 1)
    }

    /// Names and values with bytes beyond ASCII survive as bytes; lookup folds ASCII case only.
    @Test func nonASCIIBytes() {
        var headers = HTTPHeaders()
        headers.add("X-Name", "é/ü")
        #expect(headers["x-name"] == "é/ü")
        #expect(headers.valueBytes("X-NAME").map(Array.init) == Array("é/ü".utf8))
        #expect(headers["X-Nam"] == nil && headers["X-Names"] == nil)
    }
}
