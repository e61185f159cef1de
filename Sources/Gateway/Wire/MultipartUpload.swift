import HTTPServer
public import PortcullisCore
public import Service

/// A `multipart/related` upload as both surfaces receive it (v0's multipart upload; the JSON API's `uploadType=multipart`):
/// part one is the object's JSON metadata, part two its bytes. Opening reads the metadata part (bounded) and
/// positions the stream at the bytes, which the service then pulls to their end.
public struct MultipartUpload: Sendable {
    /// The metadata part's JSON.
    public let metadata: [UInt8]
    /// The media part's own `Content-Type`, when it has one (checked to be header-safe).
    public let mediaContentType: String?
    /// The media part's size if the body ends the way the SDKs end it (`CRLF--boundary--`, or `LF--boundary--`
    /// from a writer whose line breaks are LF), or with one more line break after it (curl, most MIME writers);
    /// empty without a `Content-Length`.
    public let possibleSizes: [Int64]
    /// The media part's bytes; failing if the body holds more than two parts.
    public let media: any ByteStream

    /// Reads up to the media part. Malformed envelopes are 400; a metadata part over `jsonLimit` is 413.
    public static func open(body: any ByteStream, boundary: String, jsonLimit: Int) async throws(ServiceError)
        -> MultipartUpload
    {
        let reader = MultipartReader(body: body, boundary: boundary)
        do {
            guard try await reader.nextPartHeaders() != nil else { throw MultipartError.unexpectedPartCount }
            let json = try await reader.collectPart(limit: jsonLimit)
            guard let mediaHeaders = try await reader.nextPartHeaders() else {
                throw MultipartError.unexpectedPartCount
            }
            let partType = mediaHeaders.first { $0.name.bytesEqualIgnoringASCIICase("Content-Type") }?.value
            if let partType { try ObjectResourceJSON.checkHeaderSafe(partType, "Content-Type") }
            var sizes: [Int64] = []
            if let length = body.expectedLength {
                let lineBreak = Int64(reader.lineBreakBytes)
                let estimate = max(0, length - reader.consumedBytes - Int64(boundary.utf8.count + 4) - lineBreak)
                sizes = [estimate, max(0, estimate - lineBreak)]
            }
            return MultipartUpload(
                metadata: json, mediaContentType: partType, possibleSizes: sizes,
                media: reader.partStream(lastPart: true))
        } catch let error as ServiceError {
            throw error
        } catch let error as MultipartError {
            throw ServiceError.badRequest(error.description)
        } catch {
            throw ServiceError(bodyError: error)
        }
    }
}
