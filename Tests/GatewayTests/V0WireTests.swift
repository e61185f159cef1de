import Crypto
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Testing

@testable import Gateway
@testable import Service

@Suite struct V0WireTests {
    @Test func hmacMatchesRFC4231() {
        let mac = HMAC.sha256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        let hex = mac.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
        #expect(hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func signerRotationAndPurposeSeparation() throws {
        let old = SigningKey(id: "old", secret: Array("old-secret".utf8))
        let new = SigningKey(id: "new", secret: Array("new-secret".utf8))
        let before = CapabilitySealer(keys: [old])
        let during = CapabilitySealer(keys: [new, old])
        let after = CapabilitySealer(keys: [new])
        let token = before.seal(purpose: .listCursor, payload: .object(["c": .string("x")]))
        #expect(try during.open(purpose: .listCursor, token: token)["c"] == .string("x"))
        #expect(throws: CapabilityError.unknownKey) { try after.open(purpose: .listCursor, token: token) }
        #expect(throws: CapabilityError.badSignature) { try before.open(purpose: .upload, token: token) }
        #expect(throws: CapabilityError.malformed) { try before.open(purpose: .listCursor, token: "a.b") }
        #expect(during.seal(purpose: .upload, payload: .null).hasPrefix(Base64URL.encode(Array("new".utf8))))
    }

    @Test func uploadTicketRoundTripsEncrypted() throws {
        let sealer = CapabilitySealer(keys: [SigningKey(id: "k", secret: [1, 2, 3])])
        let ticket = UploadTicket(
            bucket: "b", name: "a/b c", handle: "h1", declaredSize: 42, principal: alice,
            attributes: ObjectAttributes(
                contentType: "x/y", contentDisposition: "inline", customMetadata: ["k": "v"],
                downloadTokens: ["t"]),
            expectedMD5: "XrY7u+Ae7tCTyyK7j1rNww==", preconditions: Preconditions(ifGenerationMatch: 0),
            issuedAtMillis: 1234, expiresAtSeconds: Timestamp.now().secondsSinceEpoch + 60, derivesDownloadToken: false)
        let sealed = ticket.seal(sealer)
        #expect(
            sealed.utf8.allSatisfy { $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") })
        #expect(try UploadTicket.open(sealer, token: sealed, bucket: "b", now: .now()) == ticket)
        #expect(throws: CapabilityError.mismatch("bucket")) {
            try UploadTicket.open(sealer, token: sealed, bucket: "other", now: .now())
        }
        let later = Timestamp(nanosecondsSinceEpoch: (ticket.expiresAtSeconds + 1) * 1_000_000_000)
        #expect(throws: CapabilityError.expired) {
            try UploadTicket.open(sealer, token: sealed, bucket: "b", now: later)
        }
        // Nothing of the payload is readable in the token: not the uploader's email, not the attributes.
        let box = try #require(Base64URL.decode(String(sealed.split(separator: ".")[1])))
        #expect(!String(decoding: box, as: UTF8.self).contains("example.com"))
        #expect(!String(decoding: box, as: UTF8.self).contains("x/y"))
    }

    @Test func queryDecoding() throws {
        let q = try QueryParameters(parsing: "name=a%2Fb+c&flag&x=%E2%9C%93&empty=")
        #expect(q["name"] == "a/b c")
        #expect(q["flag"] == "")
        #expect(q.contains("flag"))
        #expect(q["x"] == "✓")
        #expect(q["empty"] == "")
        // Empty pieces are skipped, the first `=` splits, a piece without one is a name with an empty value.
        let edges = try QueryParameters(parsing: "&&a=b=c&=v&&flag&a=2&")
        #expect(edges.pairs.map(\.name) == ["a", "", "flag", "a"])
        #expect(edges.pairs.map(\.value) == ["b=c", "v", "", "2"])
        #expect(edges["a"] == "b=c")
        #expect(throws: ServiceError.self) { try QueryParameters(parsing: "a=1&b&a=2", singleValued: ["a"]) }
        #expect(try QueryParameters(parsing: "a=1&b&a=2", singleValued: ["b"]).pairs.count == 3)
        #expect(throws: ServiceError.self) { try QueryParameters(parsing: "a=%zz") }
        #expect(throws: ServiceError.self) { try QueryParameters(parsing: "a=%ff") }
        #expect(PercentEncoding.decode("a+b%2B", plusIsSpace: false) == "a+b+")
        #expect(PercentEncoding.uriComponent.encode("a/b c(1)!~*'.png") == "a%2Fb%20c(1)!~*'.png")
    }

    @Test func contentDisposition() {
        func meta(_ name: String, _ disposition: String?) -> ObjectMetadata {
            ObjectMetadata(
                bucket: "b", name: name, generation: 1, size: 0, timeCreated: .now(), updated: .now(),
                contentDisposition: disposition)
        }
        #expect(
            V0API.contentDisposition(meta("a/b/résumé 1.pdf", nil))
                == "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9%201.pdf")
        #expect(V0API.contentDisposition(meta("x.txt", "inline")) == "inline; filename*=UTF-8''x.txt")
        #expect(V0API.contentDisposition(meta("x.txt", "attachment; filename=\"y\"")) == "attachment; filename=\"y\"")
        #expect(V0API.contentDisposition(meta("q\"\t;.txt", nil)) == "attachment; filename*=UTF-8''q%22%09%3B.txt")
        #expect(V0API.contentDisposition(meta("x.txt", "Attachment; FileName=\"y\"")) == "Attachment; FileName=\"y\"")
        #expect(V0API.contentDisposition(meta("dir/sub/", nil)) == "attachment; filename*=UTF-8''sub")
        #expect(V0API.contentDisposition(meta("//", "inline")) == "inline; filename*=UTF-8''%2F%2F")
        #expect(V0API.contentDisposition(meta("plain", "filenam")) == "filenam; filename*=UTF-8''plain")
    }

    @Test func metadataEncodingIsStable() {
        let t = Timestamp(millisecondsSinceEpoch: 1_717_171_717_171)
        let m = ObjectMetadata(
            bucket: "demo", name: "notes/hello.txt", generation: 1_717_171_717_171, size: 11,
            timeCreated: t, updated: t, md5Hash: "XrY7u+Ae7tCTyyK7j1rNww==", crc32c: "yZRlqg==",
            contentType: "text/plain", contentDisposition: "inline", customMetadata: ["owner": "u123"],
            downloadTokens: ["a", "b"])
        let text = String(decoding: V0MetadataJSON.encode(m), as: UTF8.self)
        #expect(
            text
                == #"{"name":"notes/hello.txt","bucket":"demo","generation":"1717171717171","metageneration":"1","contentType":"text/plain","timeCreated":"2024-05-31T16:08:37.171Z","updated":"2024-05-31T16:08:37.171Z","storageClass":"STANDARD","size":"11","md5Hash":"XrY7u+Ae7tCTyyK7j1rNww==","crc32c":"yZRlqg==","etag":"1717171717171/1","contentEncoding":"identity","contentDisposition":"inline","downloadTokens":"a,b","metadata":{"owner":"u123"}}"#
        )
    }

    @Test func minimalMetadataEncoding() {
        let m = ObjectMetadata(
            bucket: "b", name: "é\"\n", generation: 0, metageneration: 10, size: 0,
            timeCreated: Timestamp(millisecondsSinceEpoch: 0),
            updated: Timestamp(millisecondsSinceEpoch: 1_000))
        let text = String(decoding: V0MetadataJSON.encode(m), as: UTF8.self)
        #expect(
            text
                == #"{"name":"é\"\n","bucket":"b","generation":"0","metageneration":"10","timeCreated":"1970-01-01T00:00:00.000Z","updated":"1970-01-01T00:00:01.000Z","storageClass":"STANDARD","size":"0","etag":"0/10","contentEncoding":"identity"}"#
        )
    }

    @Test func uploadMetadataDecoding() throws {
        let f = try ObjectResourceJSON.decodeUpload(Array(#"{"bucket":"","metadata":null,"size":"5","name":"n"}"#.utf8))
        #expect(f.name == "n")
        #expect(f.attributes.customMetadata.isEmpty)
        let g = try ObjectResourceJSON.decodeUpload(
            Array(#"{"metadata":{"a":1.5,"b":true,"c":{"d":1},"e":null}}"#.utf8))
        #expect(g.attributes.customMetadata == ["a": "1.5", "b": "true", "c": #"{"d":1}"#])
        #expect(throws: ServiceError.self) { try ObjectResourceJSON.decodeUpload(Array(#"{"md5Hash":"nope"}"#.utf8)) }
        #expect(throws: ServiceError.self) { try ObjectResourceJSON.decodeUpload(Array("[1]".utf8)) }
        #expect(try ObjectResourceJSON.decodeUpload([]).name == nil)
    }

    @Test func multipartReaderHandlesPreamblePaddingAndTinyChunks() async throws {
        let body = Array(
            "preamble text\r\n--xyz  \r\nContent-Type: a/b\r\nX-Other: 1\r\n\r\nfirst\r\n--xyz\r\n\r\nsecond part\r\n--xyz--\r\nepilogue"
                .utf8)
        for piece in [1, 2, 5, 100] {
            let reader = MultipartReader(body: ChunkedStream(body, piece: piece), boundary: "xyz")
            let h1 = try #require(try await reader.nextPartHeaders())
            #expect(h1.count == 2 && h1[0].name == "Content-Type" && h1[0].value == "a/b")
            #expect(try await reader.collectPart(limit: 100) == Array("first".utf8))
            let h2 = try #require(try await reader.nextPartHeaders())
            #expect(h2.isEmpty)
            #expect(try await reader.partStream(lastPart: true).collect(limit: 100) == Array("second part".utf8))
            #expect(try await reader.nextPartHeaders() == nil)
        }
        #expect(MultipartReader.boundary(contentType: "multipart/related; boundary=\"a b\"") == "a b")
        #expect(MultipartReader.boundary(contentType: "Multipart/Related;boundary=123") == "123")
        #expect(MultipartReader.boundary(contentType: "multipart/form-data; boundary=1") == nil)
    }

    /// Content whose last byte is CR keeps it when the writer ends its lines with LF alone (google-apitools,
    /// so gsutil, and gcsfs do); with CRLF line ends, the CR before the delimiter is the delimiter's. Every
    /// split of the body into reads.
    @Test(arguments: ["\n", "\r\n"], [[0x41, 0x0D], [0x0D], [0x0D, 0x0D], [0x41]] as [[UInt8]])
    func contentEndingInCRFollowsTheWritersLineBreaks(lineBreak: String, media: [UInt8]) async throws {
        let br = Array(lineBreak.utf8)
        let body =
            Array("--q".utf8) + br + Array("Content-Type: application/json".utf8) + br + br + Array("{}".utf8) + br
            + Array("--q".utf8) + br + br + media + br + Array("--q--".utf8)
        for piece in 1...body.count {
            let reader = MultipartReader(body: ChunkedStream(body, piece: piece), boundary: "q")
            _ = try #require(try await reader.nextPartHeaders())
            #expect(try await reader.collectPart(limit: 100) == Array("{}".utf8))
            _ = try #require(try await reader.nextPartHeaders())
            #expect(try await reader.partStream(lastPart: true).collect(limit: 100) == media, "piece \(piece)")
        }
        // What the rules may judge before the bytes arrive: the true size is among the estimates, whether or
        // not a line break follows the closing delimiter.
        for framed in [body, body + br] {
            let upload = try await MultipartUpload.open(
                body: ChunkedStream(framed, piece: 7), boundary: "q", jsonLimit: 100)
            #expect(upload.possibleSizes.contains(Int64(media.count)), "\(upload.possibleSizes)")
            #expect(try await upload.media.collect(limit: 100) == media)
        }
    }

    @Test func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")?.secondsSinceEpoch == 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        let now = Timestamp(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
        #expect(HTTPDate.parse(now.httpDate)?.secondsSinceEpoch == 1_700_000_000)
    }

    @Test func routerDecodesAndClassifies() throws {
        let router = V0Router()
        func route(_ method: String, _ target: String, _ headers: HTTPHeaders = [:]) throws -> Operation {
            try router.route(HTTPRequest(method: HTTPMethod(method), target: target, headers: headers)).operation
        }
        let p = try ObjectPath(bucket: "b", name: "a/b+c d")
        #expect(try route("GET", "/v0/b/b/o/a%2Fb+c%20d") == .getMetadata(p))
        #expect(try route("GET", "/v0/b/b/o/a/b+c%20d?alt=media") == .download(p))
        #expect(try route("PUT", "/v0/b/b/o/a%2Fb+c%20d", ["X-HTTP-Method-Override": "patch"]) == .updateMetadata(p))
        #expect(
            try route(
                "POST", "/v0/b/b/o?name=x", ["X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start"])
                == .resumableStart(bucket: "b", name: "x"))
        #expect(
            try route("POST", "/v0/b/b/o?name=x", ["Content-Type": "multipart/related; boundary=q"])
                == .uploadMultipart(bucket: "b", name: "x", boundary: "q"))
        #expect(try route("PUT", "/v0/b/b/o?upload_id=u") == .resumableContinue(bucket: "b", uploadID: "u"))
        #expect(try route("GET", "/v0/b/b/o") == .list(bucket: "b"))
        #expect(throws: ServiceError.self) { try route("GET", "/v0/b/b/o/%E0%A4") }
        #expect(throws: ServiceError.self) { try route("GET", "/v0/b/b/o/a?alt=bogus") }
        #expect(throws: ServiceError.self) { try route("GET", "/v0/b/b/o/" + String(repeating: "x", count: 1025)) }
        #expect(throws: ServiceError.self) { try route("GET", "/v0/b/b/o/a%0Ab") }
    }
}
