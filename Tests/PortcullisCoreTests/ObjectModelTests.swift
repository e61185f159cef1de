import Testing

@testable import PortcullisCore

@Suite struct ObjectModelTests {
    func sample() -> ObjectMetadata {
        ObjectMetadata(
            bucket: "b", name: "a/b.txt", generation: 7, metageneration: 2, size: 11,
            timeCreated: Timestamp(millisecondsSinceEpoch: 1000), updated: Timestamp(millisecondsSinceEpoch: 2000),
            contentType: "text/plain", cacheControl: "max-age=60",
            customMetadata: ["keep": "1", "drop": "2"], downloadTokens: ["t1", "t2"])
    }

    @Test func patchMergesAndBumpsMetageneration() {
        var patch = MetadataPatch()
        patch.contentType = .set("image/png")
        patch.cacheControl = .remove
        patch.customMetadata = ["drop": nil, "new": "3"]
        patch.addDownloadTokens = ["t3", "t1"]
        patch.removeDownloadTokens = ["t2"]
        let now = Timestamp(millisecondsSinceEpoch: 5000)
        let result = patch.applied(to: sample(), now: now)
        #expect(result.contentType == "image/png")
        #expect(result.cacheControl == nil)
        #expect(result.customMetadata == ["keep": "1", "new": "3"])
        #expect(result.downloadTokens == ["t1", "t3"])
        #expect(result.metageneration == 3)
        #expect(result.updated == now)
        #expect(result.generation == 7)
    }

    @Test func clearingCustomMetadataHappensBeforeMerge() {
        var patch = MetadataPatch()
        patch.clearCustomMetadata = true
        patch.customMetadata = ["only": "x"]
        #expect(patch.applied(to: sample(), now: .now()).customMetadata == ["only": "x"])
    }

    @Test func preconditions() {
        let object = sample()
        #expect(Preconditions(ifGenerationMatch: 0).isSatisfied(by: nil))
        #expect(!Preconditions(ifGenerationMatch: 0).isSatisfied(by: object))
        #expect(Preconditions(ifGenerationMatch: 7, ifMetagenerationMatch: 2).isSatisfied(by: object))
        #expect(!Preconditions(ifMetagenerationMatch: 1).isSatisfied(by: object))
        #expect(!Preconditions(ifGenerationMatch: 7).isSatisfied(by: nil))
    }

    @Test func objectNames() throws {
        #expect(throws: ObjectPathError.emptyName) { try ObjectPath(bucket: "b", name: "") }
        #expect(throws: ObjectPathError.lineBreakInName) { try ObjectPath(bucket: "b", name: "a\nb") }
        #expect(throws: ObjectPathError.nameTooLong(bytes: 1025)) {
            try ObjectPath(bucket: "b", name: String(repeating: "é", count: 512) + "x")
        }
        let odd = try ObjectPath(bucket: "b", name: "../%2e//x/")
        #expect(odd.name == "../%2e//x/")
    }
}
