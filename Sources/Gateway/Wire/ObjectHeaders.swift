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
        headers.add("X-Goog-Stored-Content-Length", String(meta.size))
        if let language = meta.contentLanguage { headers.add("Content-Language", language) }
        if let cacheControl = meta.cacheControl { headers.add("Cache-Control", cacheControl) }
        headers.add("Accept-Ranges", "bytes")
        headers.add("ETag", EntityTag.quoted(meta))
        headers.add("Last-Modified", meta.updated.httpDate)
        var hashes: [String] = []
        if let crc = meta.crc32c { hashes.append("crc32c=\(crc)") }
        if let md5 = meta.md5Hash { hashes.append("md5=\(md5)") }
        if !hashes.isEmpty, !decompressed { headers.add("x-goog-hash", hashes.joined(separator: ",")) }
        headers.add("x-goog-generation", String(meta.generation))
        headers.add("x-goog-metageneration", String(meta.metageneration))
        headers.add("x-goog-storage-class", meta.storageClass)
    }
}
