import Foundation
import PortcullisCore
import Testing

@testable import StorageClient

@Suite struct StoragePathTests {
    let storage = Storage(bucket: "b", host: "127.0.0.1:9")

    @Test func normalisesLikeTheFirebaseSDKs() {
        let ref = storage.reference(withPath: "/a//b/c.txt/")
        #expect(ref.fullPath == "a/b/c.txt")
        #expect(ref.name == "c.txt")
        #expect(ref.bucket == "b")
        #expect(ref.parent()?.fullPath == "a/b")
        #expect(ref.parent()?.parent()?.parent()?.fullPath == "")
        #expect(ref.root().parent() == nil)
        #expect(ref.root().child("x").child("y/").fullPath == "x/y")
    }

    @Test(arguments: [
        ("gs://bucket-1/a/b c.txt", "bucket-1", "a/b c.txt"),
        ("gs://bucket-1", "bucket-1", ""),
        ("http://127.0.0.1:8080/v0/b/bkt/o/a%2Fb%20c.txt?alt=media&token=x", "bkt", "a/b c.txt"),
        ("https://example.com/v0/b/bkt/o/a/b", "bkt", "a/b"),
        ("https://storage.googleapis.com/bkt/dir/file%2B1", "bkt", "dir/file+1"),
    ])
    func parsesReferenceURLs(_ url: String, _ bucket: String, _ object: String) throws {
        let ref = try storage.reference(forURL: url)
        #expect(ref.bucket == bucket)
        #expect(ref.fullPath == object)
    }

    @Test(arguments: [
        "ftp://x/y", "gs://", "https://example.com/notv0/b/x", "https://h/v0/b/bkt/x/y", "gs://bad bucket/x",
    ])
    func rejectsOtherURLs(_ url: String) {
        #expect(throws: StorageError.self) { try storage.reference(forURL: url) }
    }

    @Test func encodesLikeEncodeURIComponent() {
        #expect(Storage.encode("a/b c+d&e=é") == "a%2Fb%20c%2Bd%26e%3D%C3%A9")
        #expect(Storage.encode("A-z_0.!~*'()") == "A-z_0.!~*'()")
    }

    @Test(arguments: [
        (401, StorageErrorCode.unauthenticated), (402, .quotaExceeded), (403, .unauthorized),
        (404, .objectNotFound), (400, .unknown), (409, .unknown), (412, .unknown), (500, .unknown),
    ])
    func mapsStatusesToFirebaseCodes(_ status: Int, _ code: StorageErrorCode) {
        let error = Storage.error(
            status: status, body: Array(#"{"error":{"code":\#(status),"message":"why"}}"#.utf8).data)
        #expect(error.code == code)
        #expect(error.message == "why")
        #expect(error.httpStatus == status)
    }

    @Test func metadataDiffSendsOnlyChanges() throws {
        let json = try JSONDecoderShim.parse(
            #"{"name":"a/b","bucket":"b","size":"3","generation":"5","metageneration":"1","contentType":"text/plain","cacheControl":"no-cache","metadata":{"keep":"1","gone":"2"}}"#
        )
        var metadata = try StorageMetadata(json: json)
        #expect(metadata.size == 3 && metadata.generation == 5 && metadata.name == "b")
        metadata.contentType = "image/png"
        metadata.cacheControl = nil
        metadata.customMetadata["gone"] = nil
        metadata.customMetadata["new"] = "3"
        let patch = metadata.patchJSON()
        #expect(
            patch.encoded() == #"{"cacheControl":null,"contentType":"image/png","metadata":{"gone":null,"new":"3"}}"#)
    }

    @Test func chunkSizesFollowGranularity() {
        #expect(UploadTask.roundToGranularity(8 << 20, 262_144) == 8 << 20)
        #expect(UploadTask.roundToGranularity(300_000, 262_144) == 262_144)
        #expect(UploadTask.roundToGranularity(1000, 262_144) == 262_144)
    }
}
