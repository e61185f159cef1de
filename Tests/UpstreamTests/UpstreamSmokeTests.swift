import Testing
@testable import Upstream

@Suite struct UpstreamSmokeTests {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
