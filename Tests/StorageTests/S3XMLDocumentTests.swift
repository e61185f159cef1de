import PortcullisCore
import Testing

@testable import Storage

/// The fields S3Backend reads from S3's answers, from literal documents shaped as S3 and moto send them.
@Suite struct S3XMLDocumentTests {
    func parse(_ text: String) throws(StorageError) -> S3XMLDocument { try S3XMLDocument.parse(Array(text.utf8)) }

    /// A ListObjectsV2 page asked for with `encoding-type=url`: keys stay percent-encoded here (a space as `+`)
    /// and are decoded by `listObjects`, so a key holding a control character never reaches the XML raw.
    @Test func listObjectsV2Page() throws {
        let document = try parse(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Name>bucket</Name><Prefix>d%2F</Prefix><StartAfter>d%2Fa</StartAfter><KeyCount>3</KeyCount>
              <MaxKeys>3</MaxKeys><EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
              <Contents><Key>d%2Fa%01b</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>
                <ETag>&quot;9a0364b9e99bb480dd25e1f0284c8555&quot;</ETag><Size>7</Size>
                <StorageClass>STANDARD</StorageClass></Contents>
              <Contents><Key>d%2Fc+d%26e</Key><Size>0</Size></Contents>
              <Contents><Key>d%2F%EF%BF%BF</Key><Size>12345678901</Size></Contents>
              <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
            </ListBucketResult>
            """)
        #expect(document.keys == ["d%2Fa%01b", "d%2Fc+d%26e", "d%2F%EF%BF%BF"])
        #expect(document.sizes == [7, 0, 12_345_678_901])
        #expect(document.isTruncated)
        #expect(document.uploadID == nil && document.resultETag == nil && document.errorCode == nil)
        let names = document.keys.map { PercentEncoding.decode($0, plusIsSpace: true) }
        #expect(names == ["d/a\u{1}b", "d/c d&e", "d/\u{FFFF}"])
    }

    /// Without `encoding-type=url` S3 escapes only what XML needs; a key with a character XML cannot carry
    /// makes the whole document unreadable — raw or as a character reference — which is why listings ask for
    /// URL encoding.
    @Test func keysOutsideURLEncoding() throws {
        let listing = { (key: String) in
            "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>\(key)</Key><Size>1</Size></Contents>"
                + "</ListBucketResult>"
        }
        let document = try parse(listing("a&amp;b&lt;c&gt;&#x9;&quot;\u{E9}"))
        #expect(document.keys == ["a&b<c>\t\"\u{E9}"] && !document.isTruncated)
        for key in ["a\u{1}b", "a&#1;b", "a&#x1F;b", "\u{FFFE}"] {
            #expect(throws: StorageError.self, "\(key)") { try parse(listing(key)) }
        }
    }

    /// Ceph RGW (16.2) answers a truncated `encoding-type=url` listing with the raw last key as
    /// `NextContinuationToken` (a control character there as a character reference XML 1.0 forbids), and moto
    /// echoes `StartAfter` raw: the echo elements are cut out before parsing, the keys stay.
    @Test func echoElementsAreCutBeforeParsing() throws {
        let body = Array(
            ("<ListBucketResult><Prefix>p&#1;</Prefix><StartAfter>a\u{1}</StartAfter>"
                + "<ContinuationToken>&#x1F;</ContinuationToken><IsTruncated>true</IsTruncated>"
                + "<Contents><Key>a%01b</Key><Size>1</Size></Contents>"
                + "<NextContinuationToken>a&#1;b</NextContinuationToken></ListBucketResult>").utf8)
        #expect(throws: StorageError.self) { try S3XMLDocument.parse(body) }
        let document = try S3XMLDocument.parse(S3XMLDocument.withoutEchoes(body))
        #expect(document.keys == ["a%01b"] && document.sizes == [1] && document.isTruncated)
        // Nothing else is touched; an unclosed element is left for the parser to refuse.
        let plain = Array("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>".utf8)
        #expect(S3XMLDocument.withoutEchoes(plain) == plain)
        #expect(throws: StorageError.self) {
            try S3XMLDocument.parse(S3XMLDocument.withoutEchoes(Array("<A><Prefix>\u{1}</A>".utf8)))
        }
    }

    @Test func multipartAndCopyResults() throws {
        let initiated = try parse(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>b</Bucket>\
            <Key>k</Key><UploadId>VXBsb2FkIElE-&amp;x</UploadId></InitiateMultipartUploadResult>
            """)
        #expect(initiated.uploadID == "VXBsb2FkIElE-&x" && initiated.keys.isEmpty)
        for result in ["CopyObjectResult", "CopyPartResult", "CompleteMultipartUploadResult"] {
            let document = try parse(
                "<\(result)><LastModified>2026-01-01T00:00:00Z</LastModified>"
                    + "<ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag></\(result)>")
            #expect(document.resultETag == "\"3858f62230ac3c915f300c664312c11f-9\"", "\(result)")
        }
        #expect(try parse("<Other><ETag>x</ETag></Other>").resultETag == nil)
        // Ceph RGW sends copy and completion ETags unquoted; they are passed back as they came.
        #expect(try parse("<CopyPartResult><ETag>3858f6</ETag></CopyPartResult>").resultETag == "3858f6")
    }

    @Test func errorDocuments() throws {
        let document = try parse(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>a&amp;b</Key>\
            <RequestId>4442587FB7D0A2F9</RequestId></Error>
            """)
        #expect(document.errorCode == "NoSuchKey" && document.errorMessage == "The specified key does not exist.")
        #expect(document.keys.isEmpty, "an error's Key is not a listed key")
        guard case .notFound = S3Backend.map(status: 404, headers: [], body: Array("<Error/>".utf8)) else {
            Issue.record("404 must map to notFound"); return
        }
        let denied = S3Backend.map(
            status: 403, headers: [],
            body: Array("<Error><Code>SignatureDoesNotMatch</Code><Message>m</Message></Error>".utf8))
        guard case .upstreamDenied("S3 SignatureDoesNotMatch: m") = denied else { Issue.record("\(denied)"); return }
        // A 2xx answer that carries an error (CompleteMultipartUpload may) is an error.
        #expect(throws: StorageError.self) {
            try S3Backend.checkResult(Array("<Error><Code>InternalError</Code><Message>x</Message></Error>".utf8))
        }
    }

    /// A cut or malformed answer is an error, never a shorter listing or an error without its code.
    @Test func malformedAnswersAreRefused() {
        let truncated = "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key><Size>1</Size>"
        do {
            _ = try parse(truncated)
            Issue.record("a truncated listing must be refused")
        } catch {
            guard case .internalError(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.hasPrefix("S3 sent malformed XML: invalid XML at byte \(truncated.utf8.count)"))
        }
        let cut = S3Backend.map(status: 503, headers: [], body: Array("<Error><Code>SlowDown</Code><Mess".utf8))
        guard case .unavailable(reason: "S3 503: status 503", retryAfter: 1) = cut else {
            Issue.record("\(cut)"); return
        }
    }
}
