import Testing
@testable import HTTPServer

@Suite struct HTTPServerSmokeTests {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
