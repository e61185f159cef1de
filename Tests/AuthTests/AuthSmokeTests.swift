import Testing
@testable import Auth

@Suite struct AuthSmokeTests {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
