import PortcullisCore
import Testing

@testable import Service

/// The pure parts of the access bounds: which folder a listed entry belongs to, and which metadata keys are
/// the download-token key in another letter case.
@Suite struct AccessBoundsTests {
    @Test(arguments: [
        ("users/alice/a.txt", "users/alice"),
        ("users/a.txt", "users"),
        ("a.txt", ""),
        ("a//b", "a"),
        ("users/alice/deep/b.txt", "users/alice/deep"),
    ])
    func aNameBelongsToTheFolderBeforeItsLastSlash(name: String, folder: String) {
        #expect(StorageService.folder(of: name).bytesEqual(folder))
    }

    @Test(
        arguments: [
            ("users/alice/", "/", "users"),
            ("users/alice/a.", ".", "users/alice"),
            ("users/", "/", ""),
            ("users/alice/a::", "::", "users/alice"),
            ("users/alice/a.", nil, "users/alice"),
        ] as [(String, String?, String)])
    func aPrefixBelongsToTheFolderHoldingItWithoutItsDelimiter(prefix: String, delimiter: String?, folder: String) {
        #expect(StorageService.folder(holding: prefix, delimiter: delimiter).bytesEqual(folder))
    }

    @Test func tokenKeyVariantsDifferOnlyInLetterCase() {
        #expect(StorageService.isTokenKeyVariant("FirebaseStorageDownloadTokens"))
        #expect(StorageService.isTokenKeyVariant("FIREBASESTORAGEDOWNLOADTOKENS"))
        #expect(!StorageService.isTokenKeyVariant(ObjectMetadata.downloadTokensKey))
        #expect(!StorageService.isTokenKeyVariant("firebaseStorageDownloadTokens2"))
        #expect(!StorageService.isTokenKeyVariant("firebaseStorageDownloadToken"))
        // Only ASCII letters fold: a Kelvin sign is not a `k`.
        #expect(!StorageService.isTokenKeyVariant("firebaseStorageDownloadTo\u{212A}ens"))
    }

    @Test func anEndUsersWriteChoosesNoTokensAndTheAdminsDoes() {
        var attributes = ObjectAttributes(customMetadata: ["FirebaseStorageDownloadTokens": "x", "k": "v"])
        attributes.downloadTokens = ["chosen"]
        let user = StorageService.ownTokens(attributes, for: Principal(uid: "u", claims: [:]))
        #expect(user.downloadTokens.isEmpty)
        #expect(user.customMetadata.bytesEqual(["k": "v"]))
        let anonymous = StorageService.ownTokens(attributes, for: nil)
        #expect(anonymous.downloadTokens.isEmpty)
        let admin = StorageService.ownTokens(attributes, for: Principal(uid: "a", claims: [:], isAdmin: true))
        #expect(admin.downloadTokens == ["chosen"])
        #expect(admin.customMetadata.bytesEqual(["k": "v"]))

        var patch = MetadataPatch()
        patch.addDownloadTokens = ["a"]
        patch.removeDownloadTokens = ["b"]
        patch.replaceDownloadTokens = ["c"]
        patch.customMetadata = ["FIREBASESTORAGEDOWNLOADTOKENS": "d", "k": "v"]
        guard case .merge(let own) = StorageService.ownTokens(.merge(patch), for: nil) else {
            Issue.record("a merge stays a merge")
            return
        }
        #expect(own.addDownloadTokens.isEmpty && own.removeDownloadTokens.isEmpty && own.replaceDownloadTokens == nil)
        #expect(own.customMetadata.count == 1 && own.customMetadata["k"] == .some("v"))
    }
}
