import Testing

@testable import Upstream

@Suite struct ResponseHeadLineTests {
    private func line(_ text: String) -> ResponseHeadLine {
        Array(text.utf8).withUnsafeBytes { ResponseHeadLine($0) }
    }

    @Test func statusLines() {
        #expect(line("HTTP/1.1 200 OK\r\n") == .status(200))
        #expect(line("HTTP/2 404\r\n") == .status(404), "HTTP/2 has no reason phrase")
        #expect(line("HTTP/1.1 100 Continue\r\n") == .status(100))
        #expect(line("HTTP/1.1 20 OK\r\n") == .status(0), "two digits are no status")
        #expect(line("HTTP/1.1 2000 OK\r\n") == .status(0))
        #expect(line("HTTP/1.1 2x0 OK\r\n") == .status(0))
        #expect(line("HTTP/1.1\r\n") == .status(0))
    }

    @Test func theEmptyLineEndsTheHead() {
        #expect(line("\r\n") == .end)
        #expect(line("\n") == .end)
    }

    @Test func fieldsKeepTheirNameAndLoseSurroundingWhitespace() {
        #expect(line("Content-Type: application/json\r\n") == .field(name: "Content-Type", value: "application/json"))
        #expect(line("ETag:\t \"abc\" \t\r\n") == .field(name: "ETag", value: "\"abc\""))
        #expect(line("X-Empty:\r\n") == .field(name: "X-Empty", value: ""))
        #expect(line("Location: http://h:1/a?b=c:d\r\n") == .field(name: "Location", value: "http://h:1/a?b=c:d"))
        #expect(line("X-Goog-Meta-Ü: wert ü\r\n") == .field(name: "X-Goog-Meta-Ü", value: "wert ü"))
    }

    @Test func aLineWithoutAColonIsIgnored() {
        #expect(line("garbage\r\n") == .other)
        #expect(line("HTTP\r\n") == .other)
    }
}
