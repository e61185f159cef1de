import PortcullisCore

/// The fields S3Backend reads from S3's XML answers: ListObjectsV2 (keys exactly as sent: percent-encoded when the
/// request asked for `encoding-type=url`, which every listing of ours does — see S3Backend+List), multipart
/// (Initiate/Complete/CopyPart), CopyObject and error documents.
///
/// The document is read whole by `XMLReader`, which refuses anything that is not well-formed — a truncated answer
/// included — and every field is a leaf element matched by its parent's name and its own, byte for byte.
struct S3XMLDocument {
    private(set) var keys: [String] = []
    /// `Contents/Size` of each key, in the same order as `keys`.
    private(set) var sizes: [Int64] = []
    /// `InitiateMultipartUploadResult/UploadId`.
    private(set) var uploadID: String?
    /// The `ETag` of a CopyObject, UploadPartCopy or CompleteMultipartUpload result.
    private(set) var resultETag: String?
    private(set) var isTruncated = false
    private(set) var errorCode: String?
    private(set) var errorMessage: String?

    static func parse(_ bytes: [UInt8]) throws(StorageError) -> S3XMLDocument {
        let root: XMLReader.Element
        do { root = try XMLReader.parse(bytes) } catch { throw .internalError("S3 sent malformed XML: \(error)") }
        var document = S3XMLDocument()
        document.read(root)
        return document
    }

    /// Elements of a ListObjectsV2 answer that echo a request value or a key without `encoding-type=url`
    /// applied (moto's `StartAfter`, Ceph RGW's `NextContinuationToken`), which may hold characters XML 1.0
    /// forbids. The listing reads none of them.
    static let echoElements = ["StartAfter", "ContinuationToken", "NextContinuationToken", "Prefix"]

    /// `body` with every echo element (`echoElements`) removed, start tag to end tag, before parsing. An escaped
    /// text cannot hold `<`, so the first end tag after a start tag closes it.
    static func withoutEchoes(_ body: [UInt8]) -> [UInt8] {
        var out = body
        for name in echoElements {
            let open = Array("<\(name)>".utf8)
            let close = Array("</\(name)>".utf8)
            var result = [UInt8]()
            result.reserveCapacity(out.count)
            var index = 0
            while index < out.count {
                if out[index] == UInt8(ascii: "<"), out[index...].starts(with: open),
                    let end = firstIndex(of: close, in: out, from: index + open.count)
                {
                    index = end + close.count
                } else {
                    result.append(out[index])
                    index += 1
                }
            }
            out = result
        }
        return out
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], bytes[index...].starts(with: needle) { return index }
            index += 1
        }
        return nil
    }

    /// Records the fields under `element`, each child after its own children (the order of their end tags).
    private mutating func read(_ element: XMLReader.Element) {
        for child in element.children {
            read(child)
            record(child, parent: element.name)
        }
    }

    private mutating func record(_ element: XMLReader.Element, parent: String) {
        let text = element.text
        switch (ExactString(parent), ExactString(element.name)) {
        case ("Contents", "Key"): keys.append(text)
        case ("Contents", "Size"): sizes.append(Int64(text) ?? 0)
        case ("InitiateMultipartUploadResult", "UploadId"): uploadID = text
        case ("CopyObjectResult", "ETag"), ("CopyPartResult", "ETag"), ("CompleteMultipartUploadResult", "ETag"):
            resultETag = text
        case ("ListBucketResult", "IsTruncated"): isTruncated = text == "true"
        case ("Error", "Code"): errorCode = text
        case ("Error", "Message"): errorMessage = text
        default: break
        }
    }
}
