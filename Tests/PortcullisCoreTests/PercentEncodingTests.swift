import Testing

@testable import PortcullisCore

@Suite struct PercentEncodingTests {
    @Test func dialectsDifferOnlyInTheirLiteralSets() {
        let text = "a/b c+d&e=é!*'()~#|"
        #expect(PercentEncoding.unreserved.encode(text) == "a%2Fb%20c%2Bd%26e%3D%C3%A9%21%2A%27%28%29~%23%7C")
        #expect(PercentEncoding.unreservedAndSlash.encode(text) == "a/b%20c%2Bd%26e%3D%C3%A9%21%2A%27%28%29~%23%7C")
        #expect(PercentEncoding.uriComponent.encode(text) == "a%2Fb%20c%2Bd%26e%3D%C3%A9!*'()~%23%7C")
        #expect(PercentEncoding.rfc8187.encode(text) == "a%2Fb%20c+d&e%3D%C3%A9!%2A%27%28%29~#|")
    }

    /// Decoding inverts every dialect (and form encoding's `+`), and never repairs bytes into another name.
    @Test func decodingIsExactOrRefused() {
        let text = "a/b c+d&e=\u{E9}\u{1}\u{FFFF}\u{1F600}e\u{301}"
        for dialect in [PercentEncoding.unreserved, .unreservedAndSlash, .uriComponent, .rfc8187] {
            #expect(PercentEncoding.decode(dialect.encode(text), plusIsSpace: false)?.bytesEqual(text) == true)
        }
        #expect(PercentEncoding.decode("a+b%2B%2fc%2F", plusIsSpace: true) == "a b+/c/")
        #expect(PercentEncoding.decode("a+b", plusIsSpace: false) == "a+b")
        for bad in ["%", "%4", "%zz", "%FF", "%C3", "%ED%A0%80"] {
            #expect(PercentEncoding.decode(bad, plusIsSpace: false) == nil, "\(bad)")
        }
    }
}
