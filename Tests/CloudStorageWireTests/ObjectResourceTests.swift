import CloudStorageWire
import Foundation
import PortcullisCore
import Testing

@Suite struct ObjectResourceTests {
    static let meta = ObjectMetadata(
        bucket: "b", name: "dir/ü \"q\".txt", generation: 1_700_000_000_123_456, metageneration: 3, size: 42,
        timeCreated: Timestamp(nanosecondsSinceEpoch: 1_700_000_000_123_456_789),
        updated: Timestamp(nanosecondsSinceEpoch: 1_700_000_100_000_000_000), md5Hash: "XrY7u+Ae7tCTyyK7j1rNww==",
        crc32c: "yZRlqg==", contentType: "text/plain", contentDisposition: "inline", cacheControl: "no-cache",
        customMetadata: ["b": "2", "a": "1"], downloadTokens: ["t1", "t2"])

    @Test func rendersTheCloudStorageObjectResource() throws {
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(ObjectResource.json(Self.meta))) as? [String: Any])
        #expect(json["kind"] as? String == "storage#object")
        #expect(json["id"] as? String == "b/dir/ü \"q\".txt/1700000000123456")
        #expect(json["name"] as? String == "dir/ü \"q\".txt")
        #expect(json["bucket"] as? String == "b")
        #expect(json["generation"] as? String == "1700000000123456")
        #expect(json["metageneration"] as? String == "3")
        #expect(json["size"] as? String == "42")
        #expect(json["contentType"] as? String == "text/plain")
        #expect(json["md5Hash"] as? String == "XrY7u+Ae7tCTyyK7j1rNww==")
        #expect(json["crc32c"] as? String == "yZRlqg==")
        #expect(json["etag"] as? String == "1700000000123456/3")
        #expect(json["timeCreated"] as? String == "2023-11-14T22:13:20.123Z")
        #expect(json["updated"] as? String == "2023-11-14T22:15:00.000Z")
        #expect(json["storageClass"] as? String == "STANDARD")
        #expect(json["cacheControl"] as? String == "no-cache")
        #expect(json["contentEncoding"] == nil)
        #expect(json["selfLink"] == nil)
        let metadata = try #require(json["metadata"] as? [String: String])
        #expect(metadata == ["a": "1", "b": "2", "firebaseStorageDownloadTokens": "t1,t2"])
    }

    @Test func linksWhenABaseIsGiven() throws {
        let bytes = ObjectResource.json(Self.meta, links: .init(base: "http://127.0.0.1:9"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(json["selfLink"] as? String == "http://127.0.0.1:9/storage/v1/b/b/o/dir%2F%C3%BC%20%22q%22.txt")
        #expect(
            json["mediaLink"] as? String
                == "http://127.0.0.1:9/download/storage/v1/b/b/o/dir%2F%C3%BC%20%22q%22.txt?generation=1700000000123456&alt=media"
        )
    }

    /// The map is written in byte order with the tokens member merged in at its place (before, between and
    /// after custom keys), token values escaped — compared as bytes, where a parsed dictionary hides order.
    @Test(arguments: [
        (
            ["zeta": "1", "alpha": "2", "Émoji": "3"], ["t\"1", "t2"],
            #"{"alpha":"2","firebaseStorageDownloadTokens":"t\"1,t2","zeta":"1","Émoji":"3"}"#
        ),
        (["a": "1"], [], #"{"a":"1"}"#),
        ([:], ["t"], #"{"firebaseStorageDownloadTokens":"t"}"#),
        (["z": "1"], ["t"], #"{"firebaseStorageDownloadTokens":"t","z":"1"}"#),
        (["Z": "1"], ["t"], #"{"Z":"1","firebaseStorageDownloadTokens":"t"}"#),
        // The tokens replace a custom entry under their key; without tokens the entry is written as it is.
        (["firebaseStorageDownloadTokens": "x", "a": "1"], ["t"], #"{"a":"1","firebaseStorageDownloadTokens":"t"}"#),
        (["firebaseStorageDownloadTokens": "x"], [], #"{"firebaseStorageDownloadTokens":"x"}"#),
    ])
    func metadataMembersInByteOrder(custom: [String: String], tokens: [String], expected: String) {
        var meta = Self.meta
        meta.customMetadata = custom
        meta.downloadTokens = tokens
        let text = String(decoding: ObjectResource.json(meta), as: UTF8.self)
        #expect(text.hasSuffix(#","metadata":"# + expected + "}"))
    }

    @Test func noMetadataMemberWithoutCustomMetadataOrTokens() {
        var meta = Self.meta
        meta.customMetadata = [:]
        meta.downloadTokens = []
        let text = String(decoding: ObjectResource.json(meta), as: UTF8.self)
        #expect(!text.contains(#""metadata""#))
    }

    @Test func minimalObjectOmitsAbsentFields() throws {
        let bare = ObjectMetadata(bucket: "b", name: "n", generation: 1, size: 0, timeCreated: .now(), updated: .now())
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(ObjectResource.json(bare))) as? [String: Any])
        #expect(json["metadata"] == nil && json["md5Hash"] == nil && json["contentType"] == nil)
    }
}
