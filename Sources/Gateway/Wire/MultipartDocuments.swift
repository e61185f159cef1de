import PortcullisCore
import Service
import Storage

/// The XML documents of a multipart upload. S3 defined them and Cloud Storage's XML API speaks them unchanged
/// (same elements, same S3 namespace: google-resumable-media looks `UploadId` up in it), so the S3 surface and
/// the XML API surface write and read them here, once.
enum MultipartDocuments {
    static func initiated(_ object: ObjectPath, id: String) -> [UInt8] {
        var xml = S3XMLWriter(root: "InitiateMultipartUploadResult")
        xml.element("Bucket", object.bucket)
        xml.element("Key", object.name)
        xml.element("UploadId", id)
        return xml.finished(root: "InitiateMultipartUploadResult")
    }

    /// A part's ETag: its MD5 in hex, quoted — what a completion document names the part by.
    static func partETag(_ md5: [UInt8]) -> String { "\"" + HexText.encode(md5) + "\"" }

    /// One page of `parts`: those numbered above `marker`, at most `limit`.
    static func partList(_ target: MultipartTarget, _ parts: [MultipartPart], marker: Int, limit: Int) -> [UInt8] {
        let after = parts.filter { $0.number > marker }
        let page = after.prefix(max(limit, 0))
        var xml = S3XMLWriter(root: "ListPartsResult")
        xml.element("Bucket", target.object.bucket)
        xml.element("Key", target.object.name)
        xml.element("UploadId", target.id)
        xml.element("PartNumberMarker", Int64(marker))
        if let last = page.last { xml.element("NextPartNumberMarker", Int64(last.number)) }
        xml.element("MaxParts", Int64(limit))
        xml.element("IsTruncated", after.count > page.count)
        xml.element("StorageClass", "STANDARD")
        for part in page {
            xml.open("Part")
            xml.element("PartNumber", Int64(part.number))
            xml.element("LastModified", part.metadata.updated.s3XMLTime)
            xml.element("ETag", partETag(part.md5))
            xml.element("Size", part.metadata.size)
            xml.close("Part")
        }
        return xml.finished(root: "ListPartsResult")
    }

    /// The unfinished uploads of `bucket` (`uploads` holds one more than `limit` when the list is truncated).
    static func uploadList(bucket: String, prefix: String, limit: Int, _ uploads: [Service.MultipartUpload]) -> [UInt8]
    {
        var xml = S3XMLWriter(root: "ListMultipartUploadsResult")
        xml.element("Bucket", bucket)
        xml.element("KeyMarker", "")
        xml.element("UploadIdMarker", "")
        xml.element("Prefix", prefix)
        xml.element("MaxUploads", Int64(limit))
        xml.element("IsTruncated", uploads.count > limit)
        for upload in uploads.prefix(limit) {
            xml.open("Upload")
            xml.element("Key", upload.name)
            xml.element("UploadId", upload.id)
            xml.element("StorageClass", "STANDARD")
            xml.element("Initiated", upload.initiated.s3XMLTime)
            xml.close("Upload")
        }
        return xml.finished(root: "ListMultipartUploadsResult")
    }

    static func completed(_ object: ObjectPath, etag: String) -> [UInt8] {
        var xml = S3XMLWriter(root: "CompleteMultipartUploadResult")
        xml.element("Location", "/" + object.bucket + "/" + object.name)
        xml.element("Bucket", object.bucket)
        xml.element("Key", object.name)
        xml.element("ETag", etag)
        return xml.finished(root: "CompleteMultipartUploadResult")
    }

    /// Why a completion document was refused; each surface words it in its own error shape.
    enum CompletionError: Error {
        /// Not a `CompleteMultipartUpload` document with a number and an ETag in every `Part`.
        case malformed
        /// A part's ETag is not an MD5 (quoted or bare hex): no stored part can match it.
        case unknownPart
    }

    /// The parts a `CompleteMultipartUpload` document names, in its order: number and MD5.
    static func completionParts(_ document: [UInt8]) throws(CompletionError) -> [(number: Int, md5: [UInt8])] {
        let root: XMLReader.Element
        do { root = try XMLReader.parse(document) } catch { throw .malformed }
        guard root.name.bytesEqual("CompleteMultipartUpload") else { throw .malformed }
        var chosen: [(number: Int, md5: [UInt8])] = []
        for part in root.children where part.name.bytesEqual("Part") {
            func field(_ name: String) -> String? { part.children.first { $0.name.bytesEqual(name) }?.text }
            guard let number = field("PartNumber").flatMap({ Int($0.trimmingSpaces()) }),
                var etag = field("ETag")?.trimmingSpaces()
            else { throw .malformed }
            if etag.bytesHasPrefix("\""), etag.bytesHasSuffix("\""), etag.utf8.count >= 2 {
                etag = String(etag.dropFirst().dropLast())
            }
            guard let md5 = HexText.decode(etag), md5.count == 16 else { throw .unknownPart }
            chosen.append((number, md5))
        }
        return chosen
    }
}
