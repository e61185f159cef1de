import HTTPServer
import PortcullisCore
import Service
import Testing

@testable import Gateway

/// The multipart documents both the S3 surface and the XML API surface read and write, the hex they carry, and
/// the XML API's error codes for a multipart failure.
@Suite struct MultipartDocumentsTests {
    @Test func completionNamesPartsInOrderWithQuotedOrBareETags() throws {
        let md5 = String(repeating: "0a", count: 16)
        let document = """
            <CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Part><PartNumber> 1 </PartNumber><ETag>"\(md5)"</ETag></Part>
              <Part><ETag>\(md5.uppercased())</ETag><PartNumber>3</PartNumber></Part>
            </CompleteMultipartUpload>
            """
        let parts = try MultipartDocuments.completionParts(Array(document.utf8))
        #expect(parts.map(\.number) == [1, 3])
        #expect(parts.allSatisfy { $0.md5 == [UInt8](repeating: 0x0a, count: 16) })
    }

    @Test func completionRefusesWhatNamesNoStoredPart() {
        #expect(throws: MultipartDocuments.CompletionError.malformed) {
            try MultipartDocuments.completionParts(Array("<CompleteMultipartUpload><Part>".utf8))
        }
        #expect(throws: MultipartDocuments.CompletionError.malformed) {
            try MultipartDocuments.completionParts(Array("<Other/>".utf8))
        }
        #expect(throws: MultipartDocuments.CompletionError.malformed) {
            try MultipartDocuments.completionParts(
                Array(
                    "<CompleteMultipartUpload><Part><PartNumber>x</PartNumber><ETag>00</ETag></Part></CompleteMultipartUpload>"
                        .utf8))
        }
        #expect(throws: MultipartDocuments.CompletionError.unknownPart) {
            try MultipartDocuments.completionParts(
                Array(
                    "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"abc\"</ETag></Part></CompleteMultipartUpload>"
                        .utf8))
        }
    }

    @Test func initiatedCarriesTheUploadIDInTheS3Namespace() {
        let object = try! ObjectPath(bucket: "b", name: "a&b.bin")
        let text = String(decoding: MultipartDocuments.initiated(object, id: "0123"), as: UTF8.self)
        #expect(text.contains("<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"))
        #expect(text.contains("<Key>a&amp;b.bin</Key><UploadId>0123</UploadId>"))
    }

    @Test func hexDecodesEitherCaseAndRefusesTheRest() {
        #expect(HexText.decode("00ffA0") == [0x00, 0xff, 0xa0])
        #expect(HexText.decode("") == nil)
        #expect(HexText.decode("abc") == nil)
        #expect(HexText.decode("zz") == nil)
        #expect(HexText.decode("é0") == nil)
    }

    @Test func xmlAPIErrorsNameTheMultipartFailure() {
        func code(_ failure: Service.MultipartError) -> String {
            var details = ServiceError.Details()
            details.multipart = failure
            let response = XMLErrorShape().response(
                for: ServiceError(failure == .noSuchUpload ? .notFound : .badRequest, "m", details: details),
                requestID: nil)
            guard case .bytes(let bytes) = response.body else { return "" }
            let text = String(decoding: bytes, as: UTF8.self)
            return String(text.split(separator: "<Code>")[1].split(separator: "</Code>")[0])
        }
        #expect(code(.noSuchUpload) == "NoSuchUpload")
        #expect(code(.invalidPart(2)) == "InvalidPart")
        #expect(code(.invalidPartOrder) == "InvalidPartOrder")
        #expect(code(.entityTooSmall) == "EntityTooSmall")
    }
}
