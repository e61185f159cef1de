import HTTPServer
import PortcullisCore
import Service

/// Custom metadata sent as request headers, `<prefix>KEY: value` — `x-amz-meta-` on the S3 surface,
/// `x-goog-meta-` on the XML API — read the same way on both: the key is the header name after the prefix,
/// lower-cased (HTTP names carry no case; S3 and Cloud Storage both store these keys lower-case), and a value a
/// response header could not carry back is refused.
enum CustomMetadataHeaders {
    static func read(_ headers: HTTPHeaders, prefix: String, into attributes: inout ObjectAttributes)
        throws(ServiceError)
    {
        let prefix = Array(prefix.utf8)
        for (name, value) in headers.fields {
            let lowered = Array(name.lowercased().utf8)
            guard lowered.count > prefix.count, lowered.starts(with: prefix) else { continue }
            try ObjectResourceJSON.checkHeaderSafe(value, name)
            attributes.customMetadata[exactly: String(decoding: lowered[prefix.count...], as: UTF8.self)] = value
        }
    }
}
