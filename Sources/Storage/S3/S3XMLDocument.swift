import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Parses ListObjectsV2 (keys exactly as sent: percent-encoded when the request asked for `encoding-type=url`,
/// which every listing of ours does — see S3Backend+List), multipart (Initiate/Complete/CopyPart) and error documents with FoundationXML. `XMLParser.parse()` returns true for truncated
/// XML on Linux, so `parserError` is always checked.
final class S3XMLDocument: NSObject, XMLParserDelegate {
    private(set) var keys: [String] = []
    /// `Contents/Size` of each key, in the same order as `keys`.
    private(set) var sizes: [Int64] = []
    /// `InitiateMultipartUploadResult/UploadId`.
    private(set) var uploadID: String?
    /// The `ETag` of a CopyObject, UploadPartCopy or CompleteMultipartUpload result.
    private(set) var resultETag: String?
    private(set) var isTruncated = false
    /// `ListBucketResult/NextContinuationToken` (opaque, never URL-encoded).
    private(set) var nextContinuationToken: String?
    private(set) var errorCode: String?
    private(set) var errorMessage: String?
    private var path: [String] = []
    private var text = ""

    static func parse(_ bytes: [UInt8]) throws(StorageError) -> S3XMLDocument {
        let document = S3XMLDocument()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = document
        let ok = parser.parse()
        if !ok || parser.parserError != nil {
            throw .internalError("S3 sent malformed XML: \(parser.parserError.map { "\($0)" } ?? "parse failed")")
        }
        return document
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        path.append(elementName)
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        let parent = path.count >= 2 ? path[path.count - 2] : ""
        switch (parent, elementName) {
        case ("Contents", "Key"): keys.append(text)
        case ("Contents", "Size"): sizes.append(Int64(text) ?? 0)
        case ("InitiateMultipartUploadResult", "UploadId"): uploadID = text
        case ("CopyObjectResult", "ETag"), ("CopyPartResult", "ETag"), ("CompleteMultipartUploadResult", "ETag"):
            resultETag = text
        case ("ListBucketResult", "IsTruncated"): isTruncated = text == "true"
        case ("ListBucketResult", "NextContinuationToken"): nextContinuationToken = text
        case ("Error", "Code"): errorCode = text
        case ("Error", "Message"): errorMessage = text
        default: break
        }
        path.removeLast()
        text = ""
    }
}
