import PortcullisCore
import Testing

@testable import Gateway

@Suite struct S3AccessKeysTests {
    static let file = Array(
        #"""
        {"keys":[
          {"id":"AKUSER1","secret":"secret-one","uid":"alice","claims":{"role":"bench"}},
          {"id":"AKUSER2","secret":"secret-two","uid":"alice","claims":{"role":"bench"}},
          {"id":"AKADMIN","secret":"secret-adm","admin":true}
        ]}
        """#.utf8)

    /// A user key's principal carries a credential digest, so the rules' decision memo can cache its answers;
    /// each key and each load gets its own, so a reload with other claims never meets answers cached before.
    @Test func userKeysHaveTheirOwnIdentityPerLoad() throws {
        let first = try S3AccessKeysFile.parse(Self.file)
        let again = try S3AccessKeysFile.parse(Self.file)
        let one = try #require(first[0].principal.credentialDigest)
        let two = try #require(first[1].principal.credentialDigest)
        #expect(one != two)
        #expect(again[0].principal.credentialDigest != one)
        #expect(first[0].principal.uid == "alice")
        #expect(first[0].principal.claims[exactly: "sub"] == .string("alice"))
        #expect(first[2].principal.isAdmin)
    }
}
