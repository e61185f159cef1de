import PortcullisCore
import Testing

@testable import Storage

/// The object resource read from its bytes (`metadata(fromResource:)`, the proxied metadata read's path) gives
/// what the parsed-dictionary path gives, for the shapes GCS and its emulators send.
@Suite struct GCSObjectCodingTests {
    static let documents: [String] = [
        // fake-gcs-server's shape, with custom metadata and download tokens.
        #"""
        {"kind":"storage#object","name":"dir/a b.txt","id":"b/dir/a b.txt/17","bucket":"b","size":"17",
         "contentType":"text/plain","contentEncoding":"","crc32c":"yZRlqg==","md5Hash":"XUFAKrxLKna5cZ2REBfFkg==",
         "acl":[{"entity":"projectOwner","role":"OWNER"}],"timeCreated":"2026-12-04T10:00:00.123Z",
         "updated":"2026-12-04T10:00:01Z","generation":"1733306400123456","metageneration":"3",
         "metadata":{"firebaseStorageDownloadTokens":"t1,t2","colour":"blue","n":7},"cacheControl":"no-cache",
         "selfLink":"http://x/b/o/dir%2Fa%20b.txt"}
        """#,
        // Numbers where GCS sends strings, a deleted generation, a custom time, no metadata.
        #"{"name":"x","generation":42,"metageneration":2,"size":0,"timeDeleted":"2026-01-02T03:04:05Z","customTime":"2026-01-01T00:00:00Z","storageClass":"NEARLINE"}"#,
        // Minimal, with members the gateway does not keep and a metadata member that is not an object.
        #"{"name":"y","generation":"7","metadata":"nope","owner":{"entity":"u"},"contentLanguage":"en"}"#,
        // Repeated members: the last one counts, on both paths.
        #"{"name":"first","generation":"1","name":"second","contentType":"a/b","contentType":""}"#,
        // Escaped member names and values, integers beyond Int64 and out of shape, a time that is not one.
        #"{"na\u006de":"e\u0301","generation":"\u0034\u0032","size":"18446744073709551616","metageneration":"+3","updated":"soon","timeCreated":"2026-12-04T10:00:00.5+01:00"}"#,
    ]

    @Test(arguments: documents)
    func bothPathsAgree(_ document: String) throws {
        let bytes = Array(document.utf8)
        let fromBytes = try GCSObjectCoding.metadata(fromResource: bytes, bucket: "b")
        let fromValue = try GCSObjectCoding.metadata(from: JSONValue.parse(bytes), bucket: "b")
        #expect(fromBytes == fromValue)
    }

    @Test func theKeptMembersAreRead() throws {
        let metadata = try GCSObjectCoding.metadata(fromResource: Array(Self.documents[0].utf8), bucket: "b")
        #expect(metadata.name.bytesEqual("dir/a b.txt"))
        #expect(metadata.generation == 1_733_306_400_123_456 && metadata.metageneration == 3 && metadata.size == 17)
        #expect(metadata.downloadTokens == ["t1", "t2"])
        #expect(metadata.customMetadata == ["colour": "blue"])
        #expect(metadata.contentEncoding == nil)
        #expect(metadata.cacheControl == "no-cache")
        let later = try GCSObjectCoding.metadata(fromResource: Array(Self.documents[3].utf8), bucket: "b")
        #expect(later.name.bytesEqual("second") && later.contentType == nil)
        let escaped = try GCSObjectCoding.metadata(fromResource: Array(Self.documents[4].utf8), bucket: "b")
        #expect(escaped.name.bytesEqual("e\u{301}") && escaped.generation == 42 && escaped.metageneration == 3)
        #expect(escaped.size == 0 && escaped.updated == escaped.timeCreated)
        #expect(escaped.timeCreated == Timestamp(rfc3339: "2026-12-04T09:00:00.5Z"))
    }

    @Test func refusals() {
        for bad in [
            #"{"generation":"1"}"#, #"{"name":"x"}"#, "not json", #"{"name":"x","generation":"1"} trailing"#,
            // Two custom keys that are canonically equivalent (U+212A KELVIN SIGN and "K") would share one slot.
            #"{"name":"x","generation":"1","metadata":{"\u212a":"1","K":"2"}}"#,
        ] {
            #expect(throws: StorageError.self, "\(bad)") {
                _ = try GCSObjectCoding.metadata(fromResource: Array(bad.utf8), bucket: "b")
            }
        }
    }
}
