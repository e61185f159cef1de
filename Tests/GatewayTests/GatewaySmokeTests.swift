import Testing
@testable import Gateway

@Suite struct GatewaySmokeTests {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
