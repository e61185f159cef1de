import Testing

@testable import HTTPServer

/// Requests a proxy and the gateway could read differently are refused: `Host` outside `host[:port]`
/// (RFC 9112 §3.2, RFC 3986 §3.2.2; no comma, the mark of two combined fields), absent on HTTP/1.1 or
/// repeated, and a repeated `Authorization`.
@Suite struct HTTPRequestParserAmbiguityTests {
    /// The parser's verdict on literal bytes, fed whole and byte by byte (both must agree): nil for a head.
    private func verdict(_ text: String) -> (whole: Int?, split: Int?) {
        func run(_ pieces: [[UInt8]]) -> Int? {
            var parser = HTTPRequestParser()
            for piece in pieces + [[]] {
                for event in parser.feed(piece) {
                    switch event {
                    case .head: return nil
                    case .error(let error): return error.status
                    default: break
                    }
                }
            }
            return -1
        }
        let bytes = Array(text.utf8)
        return (run([bytes]), run(bytes.map { [$0] }))
    }

    private func request(host: String, version: String = "1.1") -> String {
        "GET /v0/b/b/o HTTP/\(version)\r\nHost: \(host)\r\n\r\n"
    }

    @Test(arguments: [
        "example.com", "EXAMPLE.com:443", "a", "localhost:8080", "127.0.0.1", "127.0.0.1:65535", "999.1.1.1",
        "under_score.example", "xn--bcher-kva.example", "a%2Db.example", "sub!$&'()*+;=delims",
        "[::1]", "[::1]:8080", "[::]", "[2001:db8::7]", "[2001:DB8:0:0:8:800:200C:417A]", "[::ffff:192.0.2.1]",
        "[1:2:3:4:5:6:7::]", "[::2:3:4:5:6:7:8]", "[1:2:3:4:5:6:1.2.3.4]", "[v1.fe80::a+en1]",
        // RFC 9112 §3.2: an empty value is what a client sends for a target without an authority; RFC 3986 lets
        // the port after `:` be empty.
        "", "example.com:",
    ])
    func validHostsAreAccepted(host: String) {
        let result = verdict(request(host: host))
        #expect(result.whole == nil, "\(host.debugDescription)")
        #expect(result.split == nil, "\(host.debugDescription) byte by byte")
    }

    @Test(arguments: [
        "a b", "a/b", "a?b", "a#b", "user@host", "user:pw@host", "a\\b", "a%zz", "a%2", "a\"b", "a<b>", "a{b}",
        "a|b", "a^b", "a,b", "[v1.a,b]", "a`b", "exa\u{e9}mple.com", "a:b", "a:80:80", "a:-1", "a:+80", "a:65536",
        "a:123456",
        "a: 80", "[::1", "::1", "[::1]x", "[::1]:x", "[]", "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[:1]", "[1:]",
        "[:::]", "[12345::]", "[g::]", "[1.2.3.4]", "[::1.2.3]", "[::1.2.3.256]", "[::01.2.3.4]", "[fe80::1%25eth0]",
        "[1:2:3:4:5:6:7:8::]", "[v.x]", "[v1.]", "[vg.x]", "[a]", "[example.com]",
    ])
    func invalidHostsAre400(host: String) {
        let result = verdict(request(host: host))
        #expect(result.whole == 400, "\(host.debugDescription)")
        #expect(result.split == 400, "\(host.debugDescription) byte by byte")
    }

    @Test func anInvalidHostIsRefusedOnHTTP10Too() {
        #expect(verdict(request(host: "a/b", version: "1.0")).whole == 400)
        #expect(verdict("GET / HTTP/1.0\r\n\r\n").whole == nil)
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nX-Host: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n",
        "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a, b\r\n\r\n",
    ])
    func missingOrRepeatedHostIs400(text: String) {
        let result = verdict(text)
        #expect(result.whole == 400, "\(text.debugDescription)")
        #expect(result.split == 400, "\(text.debugDescription) byte by byte")
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\nAuthorization: Bearer y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\nauthorization: Bearer x\r\n\r\n",
        "GET / HTTP/1.1\r\nAUTHORIZATION: Firebase x\r\nHost: a\r\nAuthorization: \r\n\r\n",
    ])
    func repeatedAuthorizationIs400(text: String) {
        let result = verdict(text)
        #expect(result.whole == 400, "\(text.debugDescription)")
        #expect(result.split == 400, "\(text.debugDescription) byte by byte")
    }

    @Test func oneAuthorizationPerRequestOnAKeptAliveConnection() {
        // The count is per message: the second request on the connection may carry its own header.
        var parser = HTTPRequestParser()
        let text =
            "GET /1 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\n\r\n"
            + "GET /2 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer y\r\n\r\n"
        var heads: [String] = []
        for event in parser.feed(Array(text.utf8)) {
            if case .head(let head) = event { heads.append(head.target) }
            if case .error(let error) = event { Issue.record("unexpected \(error)") }
        }
        #expect(heads == ["/1", "/2"])
    }
}
