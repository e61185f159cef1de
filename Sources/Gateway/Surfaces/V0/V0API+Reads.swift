import HTTPServer
import PortcullisCore
import Service
import Storage

/// GET metadata, GET `alt=media` and `alt=downloadUrl` (README.md).
extension V0API {
    func getMetadata(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let conditions = try RequestConditions.parse(call.query, call.headers)
        switch try await service.metadata(
            of: object, caller: call.caller, conditions: conditions,
            ensureDownloadToken: true, call.context)
        {
        case .current(let meta): return Self.metadataResponse(meta)
        case .notModified(let meta): return Self.notModified(meta)
        }
    }

    func download(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let options = ReadOptions(
            conditions: try RequestConditions.parse(call.query, call.headers),
            range: RequestConditions.range(call.headers), headOnly: call.request.isHead,
            ensureDownloadToken: true,
            acceptsGzip: AcceptEncoding.acceptsGzip(call.headers["Accept-Encoding"]))
        let content: ObjectContent
        switch try await service.read(object, caller: call.caller, options: options, call.context) {
        case .notModified(let meta): return Self.notModified(meta)
        case .content(let c): content = c
        }
        return content.httpResponse(
            headers: downloadHeaders(content.metadata, decompressed: content.decompressed),
            record: call.record)
    }

    /// The representation headers of an object's bytes.
    func downloadHeaders(_ meta: ObjectMetadata, decompressed: Bool = false) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add("Content-Type", ServedContentType.of(meta))
        headers.add("Content-Disposition", Self.contentDisposition(meta))
        ObjectHeaders.addRepresentation(meta, decompressed: decompressed, to: &headers)
        return headers
    }

    /// `{stored disposition or attachment}; filename*=UTF-8''{last path component}` (RFC 6266 / RFC 8187),
    /// unless the stored value already names a file.
    static func contentDisposition(_ meta: ObjectMetadata) -> String {
        let stored = meta.contentDisposition ?? "attachment"
        if containsFilename(stored) { return stored }
        // The last non-empty `/`-separated component (the whole name when there is none), found on UTF-8.
        let utf8 = meta.name.utf8
        var end = utf8.endIndex
        while end > utf8.startIndex, utf8[utf8.index(before: end)] == UInt8(ascii: "/") {
            end = utf8.index(before: end)
        }
        var start = end
        while start > utf8.startIndex, utf8[utf8.index(before: start)] != UInt8(ascii: "/") {
            start = utf8.index(before: start)
        }
        let lastComponent = start == end ? meta.name : String(meta.name[start..<end])
        return "\(stored); filename*=UTF-8''\(PercentEncoding.rfc8187.encode(lastComponent))"
    }

    /// Whether `text` contains `filename` in any ASCII case (without lowercasing a copy).
    private static func containsFilename(_ text: String) -> Bool {
        let needle = Array("filename".utf8)
        let bytes = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        for offset in 0...(bytes.count - needle.count) {
            var matched = true
            for i in 0..<needle.count where bytes[offset + i] | 0x20 != needle[i] {
                matched = false
                break
            }
            if matched { return true }
        }
        return false
    }

    func downloadURL(_ call: V0Call, _ object: ObjectPath) async throws -> HTTPResponse {
        let (_, token) = try await service.downloadToken(
            for: object, caller: call.caller, conditions: try RequestConditions.parse(call.query, call.headers),
            call.context)
        let url = objectURL(call, object) + "?alt=media&token=" + PercentEncoding.uriComponent.encode(token)
        var body = Array(#"{"downloadUrl":"#.utf8)
        JSONValue.encodeString(url, into: &body)
        body.append(UInt8(ascii: "}"))
        return Self.json(body)
    }
}
