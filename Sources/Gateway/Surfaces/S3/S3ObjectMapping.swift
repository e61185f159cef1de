import Crypto
import HTTPServer
import PortcullisCore
import Service

/// The one place S3's object headers meet the service's metadata (docs/s3-api.md, "Metadata"):
/// `x-amz-meta-NAME` ↔ custom metadata key `NAME` (lower-cased, as S3 stores it), the five representation
/// headers ↔ their fields, and the ETag — the MD5 in hex, quoted, for objects with an MD5; `"HEX-N"` for an object
/// assembled from N multipart parts (kept as custom metadata `s3-etag` when it is completed).
enum S3ObjectMapping {
    static let metaPrefix = "x-amz-meta-"
    /// Custom metadata key holding the ETag of an object completed from multipart parts.
    static let multipartETagKey = "s3-etag"
    static let defaultContentType = "binary/octet-stream"

    /// The representation headers besides Content-Type, with the field each maps to (computed: key paths are
    /// not Sendable).
    static var representationHeaders: [(String, WritableKeyPath<ObjectAttributes, String?>)] {
        [
            ("Content-Disposition", \.contentDisposition), ("Content-Encoding", \.contentEncoding),
            ("Content-Language", \.contentLanguage), ("Cache-Control", \.cacheControl),
        ]
    }

    /// What a PutObject, CopyObject (`REPLACE`) or CreateMultipartUpload says about the object.
    static func attributes(_ headers: HTTPHeaders) throws(ServiceError) -> ObjectAttributes {
        var attributes = ObjectAttributes()
        let type = headers["Content-Type"] ?? defaultContentType
        try ObjectResourceJSON.checkHeaderSafe(type, "Content-Type")
        attributes.contentType = type
        for (name, keyPath) in representationHeaders {
            guard var value = headers[name] else { continue }
            if name.bytesEqual("Content-Encoding") {
                // aws-chunked is the transfer's framing, not the object's encoding.
                value = value.bytesSplit(separator: UInt8(ascii: ",")).map { $0.trimmingSpaces() }
                    .filter { !$0.lowercased().bytesEqual("aws-chunked") }.joined(separator: ",")
                if value.isEmpty { continue }
            }
            try ObjectResourceJSON.checkHeaderSafe(value, name)
            attributes[keyPath: keyPath] = value
        }
        try CustomMetadataHeaders.read(headers, prefix: metaPrefix, into: &attributes)
        return attributes
    }

    /// The object's ETag as S3 gives it, quoted.
    static func etag(_ meta: ObjectMetadata) -> String {
        var out: [UInt8] = []
        appendETag(meta, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `etag(meta)`: every GetObject and HeadObject writes one straight into its header buffer.
    static func appendETag(_ meta: ObjectMetadata, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if !meta.customMetadata.isEmpty, let multipart = meta.customMetadata[exactly: multipartETagKey] {
            out += multipart.utf8
        } else if let md5 = meta.md5Hash,
            let bytes = md5.withContiguousUTF8({ Base64.decode(bytes: UnsafeRawBufferPointer($0)) }), bytes.count == 16
        {
            HexText.append(bytes, to: &out)
        } else {
            out += String(meta.generation, radix: 16).utf8
            out += "-1".utf8
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The headers of a GetObject or HeadObject answer (besides length and range, which the content adds).
    static func responseHeaders(_ meta: ObjectMetadata) -> HTTPHeaders {
        var headers = HTTPHeaders()
        // A stored type that is no media type is served as unknown bytes, as on the other surfaces.
        headers.add("Content-Type", meta.contentType == nil ? defaultContentType : ServedContentType.of(meta))
        if let value = meta.contentEncoding { headers.add("Content-Encoding", value) }
        if let value = meta.contentDisposition { headers.add("Content-Disposition", value) }
        if let value = meta.contentLanguage { headers.add("Content-Language", value) }
        if let value = meta.cacheControl { headers.add("Cache-Control", value) }
        headers.add("ETag") { appendETag(meta, to: &$0) }
        headers.add("Last-Modified") { meta.updated.appendHTTPDate(to: &$0) }
        headers.add("Accept-Ranges", "bytes")
        for (key, value) in meta.customMetadata where !key.bytesEqual(multipartETagKey) {
            headers.add(metaPrefix + key, value)
        }
        return headers
    }

    /// `response-content-type` and its siblings: a GetObject's presigned or signed override of the answer's
    /// representation headers.
    static let overrides: [(query: String, header: String)] = [
        ("response-content-type", "Content-Type"), ("response-content-language", "Content-Language"),
        ("response-expires", "Expires"), ("response-cache-control", "Cache-Control"),
        ("response-content-disposition", "Content-Disposition"), ("response-content-encoding", "Content-Encoding"),
    ]

    static func applyOverrides(_ query: QueryParameters, to headers: inout HTTPHeaders) throws(ServiceError) {
        guard query.pairs.contains(where: { $0.name.bytesHasPrefix("response-") }) else { return }
        for (name, header) in overrides {
            guard let value = query[name] else { continue }
            try ObjectResourceJSON.checkHeaderSafe(value, header)
            headers.set(header, value)
        }
    }
}
