public import HTTPServer
public import PortcullisCore
import Service

/// The response headers both surfaces give an object's bytes besides their own: encoding, language, caching,
/// ranges, validators, and GCS's `x-goog-*` facts (hashes, generation, metageneration, storage class).
public enum ObjectHeaders {
    public static func addRepresentation(_ meta: ObjectMetadata, to headers: inout HTTPHeaders) {
        if let encoding = meta.contentEncoding, !encoding.isEmpty, encoding != "identity" {
            headers.add("Content-Encoding", encoding)
        }
        if let language = meta.contentLanguage { headers.add("Content-Language", language) }
        if let cacheControl = meta.cacheControl { headers.add("Cache-Control", cacheControl) }
        headers.add("Accept-Ranges", "bytes")
        headers.add("ETag", EntityTag.quoted(meta))
        headers.add("Last-Modified", meta.updated.httpDate)
        var hashes: [String] = []
        if let crc = meta.crc32c { hashes.append("crc32c=\(crc)") }
        if let md5 = meta.md5Hash { hashes.append("md5=\(md5)") }
        if !hashes.isEmpty { headers.add("x-goog-hash", hashes.joined(separator: ",")) }
        headers.add("x-goog-generation", String(meta.generation))
        headers.add("x-goog-metageneration", String(meta.metageneration))
        headers.add("x-goog-storage-class", meta.storageClass)
    }
}
