import PortcullisCore
import Testing

@testable import Service

@Suite struct CapabilitySealerTests {
    let sealer = CapabilitySealer(keys: [SigningKey(id: "k1", secret: Array("first secret".utf8))])

    @Test func sealsAndOpensPerPurpose() throws {
        let token = sealer.seal(purpose: .upload, payload: .object(["email": .string("alice@example.com")]))
        #expect(try sealer.open(purpose: .upload, token: token)["email"]?.stringValue == "alice@example.com")
        #expect(throws: CapabilityError.badSignature) { try sealer.open(purpose: .listCursor, token: token) }
        #expect(throws: CapabilityError.badSignature) { try sealer.open(purpose: .signedURL, token: token) }
    }
}
