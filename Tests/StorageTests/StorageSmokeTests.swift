import Testing
@testable import Storage

@Suite struct StorageSmokeTests {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
