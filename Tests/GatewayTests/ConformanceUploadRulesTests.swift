import Foundation
import HTTPServer
import PortcullisCore
import Rules
import Storage
import Synchronization
import Testing

@testable import Gateway
@testable import Service

/// Uploads judged by real rules: the early check made before the body is read
/// must never deny what the final check (true size and hashes, in `beforeCommit`) allows, and every upload is
/// counted once in `portcullis_rules_decisions_total`.
@Suite struct ConformanceUploadRulesTests {
    static let rules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /hashed/{name} {
              allow get;
              allow create: if request.resource.md5Hash == request.resource.metadata.expectedMd5;
            }
            match /nonempty/{name} {
              allow create: if request.resource.size > 0;
            }
            match /small/{name} {
              allow create: if request.resource.size < 10;
            }
            match /same/{name} {
              allow create: if resource == null || request.resource.md5Hash == resource.md5Hash;
            }
            match /owned/{uid}/{name} {
              allow get;
              allow create: if request.auth != null && request.auth.uid == uid && request.resource.size < 100000;
            }
            match /anyone/{name} {
              allow get;
              allow create: if request.auth != null;
            }
          }
        }
        """

    struct Setup {
        let harness: V0Harness
        let api: V0API
        let metrics: MetricsRegistry

        init() throws {
            let store = RulesStore(logger: .disabled)
            _ = try store.load(source: ConformanceUploadRulesTests.rules, fileName: "c.rules").get()
            harness = try V0Harness(rules: try #require(store.current))
            metrics = MetricsRegistry()
            let service = StorageService(
                configuration: ServiceConfiguration(),
                backends: [V0Harness.bucket: harness.backend], sealer: harness.sealer,
                rules: store, metrics: metrics, logger: .disabled)
            api = V0API(
                service: service, configuration: V0Configuration(publicURL: "http://gateway.test"),
                logger: .disabled)
        }

        func send(
            _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
            stream: (any ByteStream)? = nil, principal: Principal? = nil
        ) async throws -> TestResponse {
            try await harness.send(
                method, target, headers: headers, body: body, stream: stream, principal: principal,
                api: api)
        }

        func count(_ decision: String) -> Int {
            let line = metrics.render().split(separator: "\n").first {
                $0.hasPrefix(#"portcullis_rules_decisions_total{method="create",decision="\#(decision)"}"#)
            }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
    }

    /// base64(MD5("hash me")), computed outside the server.
    static let hashMeMD5 = "F7Mdzpa51sbQprqV9HeW+w=="

    static func multipart(_ name: String, _ data: [UInt8], metadata: String) -> (String, [UInt8]) {
        let boundary = "1234567890987654321"
        var body = Array("--\(boundary)\r\nContent-Type: application/json; charset=utf-8\r\n\r\n".utf8)
        body += Array(#"{"name":"\#(name)","contentType":"text/plain","metadata":\#(metadata)}"#.utf8)
        body += Array("\r\n--\(boundary)\r\nContent-Type: text/plain\r\n\r\n".utf8) + data
        body += Array("\r\n--\(boundary)--".utf8)
        return ("multipart/related; boundary=\(boundary)", body)
    }

    @Test func md5RuleIsJudgedOnTheTrueHash() async throws {
        let s = try Setup()
        let data = Array("hash me".utf8)
        let meta = #"{"expectedMd5":"\#(Self.hashMeMD5)"}"#
        // Multipart (JS uploadBytes).
        let (type, body) = Self.multipart("hashed/a", data, metadata: meta)
        let r = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=hashed%2Fa",
            headers: [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", type)], body: body)
        #expect(r.status == 200, "\(r.text)")
        // Resumable: start knows no hash yet; finalize does.
        let start = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=hashed%2Fb",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", String(data.count)), ("Content-Type", "application/json"),
            ],
            body: Array(#"{"metadata":\#(meta)}"#.utf8))
        #expect(start.status == 200, "\(start.text)")
        let url = String(try #require(start["X-Goog-Upload-URL"]).dropFirst("http://gateway.test".count))
        let fin = try await s.send(
            "POST", url,
            headers: [
                ("X-Goog-Upload-Command", "upload, finalize"),
                ("X-Goog-Upload-Offset", "0"),
            ], body: data)
        #expect(fin.status == 200, "\(fin.text)")
        // Wrong bytes are still denied, by the final check, and leave no object.
        let (type2, body2) = Self.multipart("hashed/c", Array("other".utf8), metadata: meta)
        let denied = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=hashed%2Fc",
            headers: [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", type2)],
            body: body2)
        #expect(denied.status == 403)
        #expect(try await s.send("GET", V0Harness.objectPath("hashed/c")).status == 404)
    }

    @Test func unknownSizeIsJudgedOnTheTrueSize() async throws {
        let s = try Setup()
        // Media upload without Content-Length (chunked).
        let chunked = ChunkedStream(Array("abcdef".utf8), piece: 3, announceLength: false)
        let r = try await s.send("POST", "/v0/b/\(V0Harness.bucket)/o?name=nonempty%2Fa", stream: chunked)
        #expect(r.status == 200, "\(r.text)")
        // Resumable start without a declared size.
        let start = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=nonempty%2Fb",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
            ])
        #expect(start.status == 200, "\(start.text)")
        // An empty upload is denied.
        let empty = try await s.send("POST", "/v0/b/\(V0Harness.bucket)/o?name=nonempty%2Fc", body: [])
        #expect(empty.status == 403)
    }

    @Test func reuploadOfIdenticalBytesIsAllowed() async throws {
        let s = try Setup()
        let data = Array("same bytes".utf8)
        #expect(try await s.send("POST", "/v0/b/\(V0Harness.bucket)/o?name=same%2Fa", body: data).status == 200)
        #expect(try await s.send("POST", "/v0/b/\(V0Harness.bucket)/o?name=same%2Fa", body: data).status == 200)
        #expect(
            try await s.send("POST", "/v0/b/\(V0Harness.bucket)/o?name=same%2Fa", body: Array("x".utf8)).status
                == 403)
    }

    @Test func earlyDenialStillRefusesBeforeReadingTheBody() async throws {
        let s = try Setup()
        // A declared size the rule refuses whatever the hashes: 403 at resumable start, no upload URL.
        let start = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=small%2Fa",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", "100"),
            ])
        #expect(start.status == 403)
        #expect(start["X-Goog-Upload-URL"] == nil)
        // A multipart body whose media part is 20 bytes, with or without a trailing CRLF.
        let (type, body) = Self.multipart("small/b", Array(repeating: 0x61, count: 20), metadata: "{}")
        let r = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=small%2Fb",
            headers: [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", type)], body: body)
        #expect(r.status == 403)
        // A 9-byte media part followed by a trailing CRLF is not wrongly judged as 11 bytes.
        let (type2, body2) = Self.multipart("small/c", Array(repeating: 0x61, count: 9), metadata: "{}")
        let ok = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=small%2Fc",
            headers: [("X-Goog-Upload-Protocol", "multipart"), ("Content-Type", type2)],
            body: body2 + Array("\r\n".utf8))
        #expect(ok.status == 200, "\(ok.text)")
    }

    /// Counts the pieces pulled from it: a body refused at the head is never read.
    final class WatchedStream: ByteStream {
        let inner: ChunkedStream
        let pulls = Mutex(0)
        var expectedLength: Int64? { inner.expectedLength }

        init(_ bytes: [UInt8]) { inner = ChunkedStream(bytes, piece: 4, announceLength: false) }

        func next(maxLength: Int) async throws -> [UInt8]? {
            pulls.withLock { $0 += 1 }
            return try await inner.next(maxLength: maxLength)
        }

        func cancel() {}
    }

    @Test func aDeniedUploadOfUnknownSizeIsRefusedAtTheHeadWhateverTheObject() async throws {
        let s = try Setup()
        let owner = Principal(uid: "owner", claims: ["sub": .string("owner")])
        try await s.harness.put("owned/owner/existing", Array("x".utf8), principal: owner)
        // alice may not write into owner's folder: whatever the size, so the answer is final at the head — 403
        // for an existing object with a failing precondition as for a missing one, and no byte is read.
        for name in ["owned%2Fowner%2Fexisting", "owned%2Fowner%2Fmissing"] {
            for precondition in ["", "&ifGenerationMatch=0"] {
                let body = WatchedStream(Array(repeating: 0x61, count: 64))
                let r = try await s.send(
                    "POST", "/v0/b/\(V0Harness.bucket)/o?name=\(name)\(precondition)",
                    stream: body, principal: alice)
                #expect(r.status == 403, "\(name)\(precondition): \(r.status) \(r.text)")
                #expect(body.pulls.withLock { $0 } == 0, "the refused body was read")
            }
            // A resumable start that declares no size is refused the same way.
            let start = try await s.send(
                "POST", "/v0/b/\(V0Harness.bucket)/o?name=\(name)&ifGenerationMatch=0",
                headers: [
                    ("X-Goog-Upload-Protocol", "resumable"),
                    ("X-Goog-Upload-Command", "start"),
                ], principal: alice)
            #expect(start.status == 403, "\(start.text)")
        }
        #expect(try await s.send("GET", V0Harness.objectPath("owned/owner/missing")).status == 404)
    }

    @Test func anUploadAllowedWhateverItsSizeAnswersItsPreconditionAtTheHead() async throws {
        let s = try Setup()
        try await s.harness.put("anyone/existing", Array("x".utf8), principal: alice)
        // Allowed for any size and hash: the failing precondition is answered before the body is read.
        let body = WatchedStream(Array(repeating: 0x61, count: 64))
        let r = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=anyone%2Fexisting&ifGenerationMatch=0",
            stream: body, principal: alice)
        #expect(r.status == 412, "\(r.text)")
        #expect(body.pulls.withLock { $0 } == 0)
        // The owner's own upload of unknown size is undecided at the head and judged on its true size.
        let owner = Principal(uid: "owner", claims: ["sub": .string("owner")])
        let big = ChunkedStream(Array(repeating: 0x62, count: 100_001), piece: 8192, announceLength: false)
        let tooBig = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=owned%2Fowner%2Fbig", stream: big,
            principal: owner)
        #expect(tooBig.status == 403)
        let small = ChunkedStream(Array(repeating: 0x62, count: 10), piece: 4, announceLength: false)
        #expect(
            try await s.send(
                "POST", "/v0/b/\(V0Harness.bucket)/o?name=owned%2Fowner%2Fsmall", stream: small,
                principal: owner
            ).status == 200)
    }

    @Test func everyUploadIsCountedOnce() async throws {
        let s = try Setup()
        #expect(try await s.send("POST", "/v0/b/\(V0Harness.bucket)/o?name=small%2Fm", body: [1, 2]).status == 200)
        let (type, body) = Self.multipart("small/mp", [1, 2], metadata: "{}")
        #expect(
            try await s.send(
                "POST", "/v0/b/\(V0Harness.bucket)/o?name=small%2Fmp",
                headers: [("Content-Type", type)], body: body
            ).status == 200)
        let start = try await s.send(
            "POST", "/v0/b/\(V0Harness.bucket)/o?name=small%2Fr",
            headers: [
                ("X-Goog-Upload-Protocol", "resumable"), ("X-Goog-Upload-Command", "start"),
                ("X-Goog-Upload-Header-Content-Length", "2"),
            ])
        let url = String(try #require(start["X-Goog-Upload-URL"]).dropFirst("http://gateway.test".count))
        #expect(
            try await s.send(
                "POST", url,
                headers: [
                    ("X-Goog-Upload-Command", "upload, finalize"),
                    ("X-Goog-Upload-Offset", "0"),
                ], body: [1, 2]
            ).status == 200)
        #expect(s.count("allow") == 3)
        #expect(
            try await s.send(
                "POST", "/v0/b/\(V0Harness.bucket)/o?name=small%2Fbig",
                body: Array(repeating: 0, count: 50)
            ).status == 403)
        #expect(s.count("deny") == 1)
        #expect(s.count("allow") == 3)
    }
}
