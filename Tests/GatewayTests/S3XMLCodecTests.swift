import HTTPServer
import PortcullisCore
import Service
import Testing

@testable import Gateway

/// The S3 surface's wire pieces: the XML writer (namespace, escaping), the error shape and its codes, XML times,
/// and the one metadata mapping between S3 headers and object attributes.
@Suite struct S3XMLCodecTests {
    static func text(_ response: HTTPResponse) -> String {
        guard case .bytes(let bytes) = response.body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func writerEscapesAndUsesTheS3Namespace() {
        var xml = S3XMLWriter(root: "ListBucketResult")
        xml.element("Key", "a<b>&\"c\"")
        xml.element("MaxKeys", Int64(7))
        xml.element("IsTruncated", false)
        let out = String(decoding: xml.finished(root: "ListBucketResult"), as: UTF8.self)
        #expect(
            out.bytesHasPrefix(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            ))
        #expect(out.contains("<Key>a&lt;b&gt;&amp;&quot;c&quot;</Key>"))
        #expect(out.contains("<MaxKeys>7</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>"))
    }

    @Test func errorsCarryS3CodesAndTheRequestID() {
        let missing = S3ErrorShape().response(
            for: .noSuchObject(bucket: "b", name: "k"), requestID: "rid-1")
        #expect(missing.status == 404)
        #expect(Self.text(missing).contains("<Code>NoSuchKey</Code>"))
        #expect(Self.text(missing).contains("<RequestId>rid-1</RequestId>"))
        #expect(missing.headers["x-amz-request-id"] == "rid-1")
        let denied = S3ErrorShape().response(for: .denied(.get), requestID: nil)
        #expect(denied.status == 403 && Self.text(denied).contains("<Code>AccessDenied</Code>"))
        #expect(S3ErrorShape.s3Error(.preconditionFailed()).code == "PreconditionFailed")
        #expect(S3ErrorShape.s3Error(ServiceError(.rangeNotSatisfiable, "x")).code == "InvalidRange")
        #expect(S3ErrorShape.s3Error(ServiceError(.notImplemented, "x")).code == "NotImplemented")
        #expect(S3Error(.skewed).code == "RequestTimeTooSkewed" && S3Error(.skewed).status == 403)
        #expect(S3Error(.mismatch).code == "SignatureDoesNotMatch")
        #expect(S3Error(.unknownKey).code == "InvalidAccessKeyId")
    }

    @Test func timesAreISO8601WithMilliseconds() {
        #expect(Timestamp(millisecondsSinceEpoch: 1_369_353_600_123).s3XMLTime == "2013-05-24T00:00:00.123Z")
    }

    @Test func headersMapToAttributesOnce() throws {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/plain")
        headers.add("Content-Encoding", "aws-chunked,gzip")
        headers.add("Cache-Control", "no-cache")
        headers.add("X-Amz-Meta-Colour", "blue")
        let attributes = try S3ObjectMapping.attributes(headers)
        #expect(attributes.contentType == "text/plain")
        #expect(attributes.contentEncoding == "gzip")
        #expect(attributes.cacheControl == "no-cache")
        #expect(attributes.customMetadata[exactly: "colour"] == "blue")
        #expect(try S3ObjectMapping.attributes(HTTPHeaders()).contentType == "binary/octet-stream")
    }

    @Test func etagIsTheMD5InHexOrTheMultipartOne() {
        var meta = ObjectMetadata(
            bucket: "b", name: "k", generation: 1, size: 0, timeCreated: Timestamp(nanosecondsSinceEpoch: 0),
            updated: Timestamp(nanosecondsSinceEpoch: 0))
        meta.md5Hash = "1B2M2Y8AsgTpgAmY7PhCfg=="  // MD5 of nothing
        #expect(S3ObjectMapping.etag(meta) == "\"d41d8cd98f00b204e9800998ecf8427e\"")
        meta.customMetadata[exactly: "s3-etag"] = "abc-3"
        #expect(S3ObjectMapping.etag(meta) == "\"abc-3\"")
        #expect(S3ObjectMapping.responseHeaders(meta)["x-amz-meta-s3-etag"] == nil)
    }

    @Test func objectsAreServedWithAMediaTypeOnly() {
        var meta = ObjectMetadata(
            bucket: "b", name: "n", generation: 1, size: 0, timeCreated: .now(), updated: .now(),
            contentType: "text/html; charset=utf-8")
        #expect(S3ObjectMapping.responseHeaders(meta)["Content-Type"] == "text/html; charset=utf-8")
        meta.contentType = "text/html, <script>"
        #expect(S3ObjectMapping.responseHeaders(meta)["Content-Type"] == ServedContentType.unknown)
        meta.contentType = nil
        #expect(S3ObjectMapping.responseHeaders(meta)["Content-Type"] == S3ObjectMapping.defaultContentType)
    }
}
