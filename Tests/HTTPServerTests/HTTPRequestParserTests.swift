import Testing

@testable import HTTPServer

/// A parse outcome flattened for comparison.
private struct Outcome: Equatable {
    var heads: [String] = []
    var body: [UInt8] = []
    var ends = 0
    var error: Int?
}

private func run(_ text: String, limits: HTTPParserLimits = HTTPParserLimits(), split: Int? = nil) -> (
    Outcome, [HTTPRequestHead]
) {
    var parser = HTTPRequestParser(limits: limits)
    var outcome = Outcome()
    var heads: [HTTPRequestHead] = []
    let bytes = Array(text.utf8)
    let pieces: [[UInt8]] =
        split.map { size in
            stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
        } ?? [bytes]
    for piece in pieces + [[]] {
        for event in parser.feed(piece) {
            switch event {
            case .head(let head):
                outcome.heads.append("\(head.method) \(head.target)")
                heads.append(head)
            case .body(let bytes): outcome.body += bytes
            case .end: outcome.ends += 1
            case .error(let error): outcome.error = error.status
            }
        }
        if outcome.error != nil { break }
    }
    return (outcome, heads)
}

private func status(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) -> Int? {
    run(text, limits: limits).0.error
}

@Suite struct HTTPRequestParserTests {
    @Test func simpleGet() throws {
        let (outcome, heads) = run("GET /healthz?x=1 HTTP/1.1\r\nHost: a\r\nUser-Agent: t\r\n\r\n")
        #expect(outcome == Outcome(heads: ["GET /healthz?x=1"], ends: 1))
        let head = try #require(heads.first)
        #expect(head.headers["host"] == "a")
        #expect(head.headers["USER-AGENT"] == "t")
        #expect(head.keepAlive)
        #expect(head.framing == .none)
        #expect(head.headBytes == 53)
    }

    @Test(arguments: [1, 2, 3, 7])
    func byteBySplitsGiveSameResult(split: Int) {
        let text =
            "POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n"
            + "GET /next HTTP/1.1\r\nHost: a\r\n\r\n"
        let (outcome, _) = run(text, split: split)
        #expect(outcome == Outcome(heads: ["POST /u", "GET /next"], body: Array("hello world".utf8), ends: 2))
    }

    @Test func contentLengthBodyAndPipelining() {
        let (outcome, heads) = run(
            "PUT /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(outcome == Outcome(heads: ["PUT /a", "GET /b"], body: Array("abc".utf8), ends: 2))
        #expect(heads.first?.framing == .length(3))
    }

    @Test func http10KeepAliveAndClose() {
        #expect(run("GET / HTTP/1.0\r\n\r\n").1.first?.keepAlive == false)
        #expect(run("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").1.first?.keepAlive == true)
        #expect(run("GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n").1.first?.keepAlive == false)
    }

    @Test func expectContinueOnlyWithBody() {
        #expect(
            run("PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx").1.first?
                .expectsContinue == true)
        #expect(run("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n").1.first?.expectsContinue == false)
    }

    @Test func absoluteFormBecomesOriginForm() {
        #expect(run("GET http://example.com:80/p?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\n").0.heads == ["GET /p?q=1"])
        #expect(run("GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n").0.heads == ["GET /"])
        #expect(run("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").0.heads == ["OPTIONS *"])
    }

    @Test func leadingEmptyLinesIgnored() {
        #expect(run("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n").0.heads == ["GET /"])
    }

    @Test func fieldValueWhitespaceTrimmedAndObsTextKept() {
        let (_, heads) = run("GET / HTTP/1.1\r\nHost: a\r\nX:  \t v a \t\r\n\r\n")
        #expect(heads.first?.headers["x"] == "v a")
    }

    /// Every smuggling and syntax case: the exact status.
    @Test(arguments: [
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5 x\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer: x\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n", 400),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  folded\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n folded: 1\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX\t: 1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: a\u{0}b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: a\rb\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: a\u{7f}\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\n\r\n", 400),
        ("GET / HTTP/1.1\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n: empty\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /  HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
        ("GET /\r\n\r\n", 400),
        (" GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /a#f HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /\u{7f} HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /é HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET / http/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTP/2\r\nHost: a\r\n\r\n", 505),
        ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
        ("\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n", 400),
    ])
    func malformedRequests(text: String, expected: Int) {
        #expect(status(text) == expected, "\(text.debugDescription)")
        // Fed byte by byte the parser reaches the same verdict.
        #expect(run(text, split: 1).0.error == expected, "\(text.debugDescription) split")
    }

    @Test func requestLineLimitIs414() {
        let ok = "GET /" + String(repeating: "a", count: 8192 - 14) + " HTTP/1.1"
        #expect(ok.utf8.count == 8192)
        #expect(status(ok + "\r\nHost: a\r\n\r\n") == nil)
        #expect(status("GET /" + String(repeating: "a", count: 8192 - 13) + " HTTP/1.1\r\nHost: a\r\n\r\n") == 414)
        // Refused before the line ends.
        #expect(status("GET /" + String(repeating: "a", count: 9000)) == 414)
        #expect(run("GET /" + String(repeating: "a", count: 9000), split: 100).0.error == 414)
    }

    @Test func headerBlockLimitIs431() {
        // 32 KiB exactly: the host line, one big field and the final CRLF.
        let fixed = "Host: a\r\n".utf8.count + "X: \r\n".utf8.count + 2
        let fill = String(repeating: "v", count: 32 * 1024 - fixed)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nX: \(fill)\r\n\r\n") == nil)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nX: \(fill)v\r\n\r\n") == 431)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nX: \(fill)\(fill)") == 431)
    }

    @Test func headerCountLimitIs431() {
        let fields = (1..<100).map { "X-\($0): v\r\n" }.joined()
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\n\(fields)\r\n") == nil)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\n\(fields)X-100: v\r\n\r\n") == 431)
    }

    @Test func trailerLimitIs431() {
        let big = String(repeating: "t", count: 9000)
        #expect(status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: \(big)\r\n\r\n") == 431)
        #expect(status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: small\r\n\r\n") == nil)
    }

    @Test func bodyLimitIs413() {
        let limits = HTTPParserLimits(maxBodyBytes: 10)
        #expect(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", limits: limits) == 413)
        #expect(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n", limits: limits) == nil)
        #expect(
            status(
                "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\n", limits: limits)
                == 413)
    }

    @Test func chunkLineLimit() {
        let ext = String(repeating: "e", count: 5000)
        #expect(status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;\(ext)\r\n") == 400)
    }

    @Test func bodyEventsRespectMaxBodyBytes() {
        var parser = HTTPRequestParser()
        let bytes = Array("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789".utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            var sizes: [Int] = []
            while true {
                let (consumed, event) = parser.parse(
                    UnsafeRawBufferPointer(rebasing: buffer[offset...]), maxBodyBytes: 4)
                offset += consumed
                guard let event else { break }
                if case .body(let chunk) = event { sizes.append(chunk.count) }
            }
            #expect(sizes == [4, 4, 2])
            #expect(offset == bytes.count)
        }
    }

    @Test func errorIsSticky() {
        var parser = HTTPRequestParser()
        _ = parser.feed(Array("BAD\r\n".utf8))
        #expect(parser.hasFailed)
        guard case .error(let e)? = parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)).first else {
            Issue.record("expected an error"); return
        }
        #expect(e.status == 400)
    }
}
