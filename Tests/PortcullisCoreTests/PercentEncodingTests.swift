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
}
