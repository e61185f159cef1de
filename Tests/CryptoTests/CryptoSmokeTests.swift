import Testing
@testable import Crypto

@Suite struct CryptoSmokeTests {
    @Test func moduleLoads() { #expect(Bool(true)) }
}
