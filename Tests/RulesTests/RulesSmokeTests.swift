import Testing
@testable import Rules

@Suite struct RulesSmokeTests {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
