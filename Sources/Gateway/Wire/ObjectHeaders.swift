public import HTTPServer
public import PortcullisCore
import Service

/// The response headers both surfaces give an object's bytes besides their own: encoding, language, caching,
/// ranges, validators, and GCS's `x-goog-*` facts (hashes, generation, metageneration, storage class, the
/// stored encoding and length).
public enum ObjectHeaders {
    /// A body being decompressed (decompressive transcoding) carries no `Content-Encoding` and no hashes (they
    /// are the stored bytes'), and says so with `Warning`, as Cloud Storage does.
    public static func addRepresentation(
        _ meta: ObjectMetadata, decompressed: Bool = false,
        to headers: inout HTTPHeaders
    ) {
        if decompressed {
            headers.add("Warning", "214 UploadServer gunzipped")
        } else if let encoding = meta.contentEncoding, !encoding.isEmpty, encoding != "identity" {
            headers.add("Content-Encoding", encoding)
        }
        headers.add("X-Goog-Stored-Content-Encoding", meta.contentEncoding ?? "identity")
        // Numbers, validators and dates are written into the header buffer as bytes: no `String` per value.
        headers.add("X-Goog-Stored-Content-Length") { DecimalText.append(meta.size, to: &$0) }
        if let language = meta.contentLanguage { headers.add("Content-Language", language) }
        if let cacheControl = meta.cacheControl { headers.add("Cache-Control", cacheControl) }
        headers.add("Accept-Ranges", "bytes")
        headers.add("ETag") { EntityTag.appendQuoted(meta, to: &$0) }
        headers.add("Last-Modified") { meta.updated.appendHTTPDate(to: &$0) }
        if !decompressed { addHashes(meta, to: &headers) }
        headers.add("x-goog-generation") { DecimalText.append(meta.generation, to: &$0) }
        headers.add("x-goog-metageneration") { DecimalText.append(meta.metageneration, to: &$0) }
        headers.add("x-goog-storage-class", meta.storageClass)
    }

    /// `x-goog-hash: crc32c=…,md5=…`, the stored bytes' hashes (whichever the object has).
    public static func addHashes(_ meta: ObjectMetadata, to headers: inout HTTPHeaders) {
        guard meta.crc32c != nil || meta.md5Hash != nil else { return }
        headers.add("x-goog-hash") { value in
            if let crc = meta.crc32c {
                value.append(contentsOf: "crc32c=".utf8)
                value.append(contentsOf: crc.utf8)
            }
            if let md5 = meta.md5Hash {
                if meta.crc32c != nil { value.append(UInt8(ascii: ",")) }
                value.append(contentsOf: "md5=".utf8)
                value.append(contentsOf: md5.utf8)
            }
        }
    }
}
