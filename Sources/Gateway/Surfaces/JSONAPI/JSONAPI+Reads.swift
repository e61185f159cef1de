import HTTPServer
import PortcullisCore
import Service
import Storage

/// `objects.get`: the resource (`alt=json`) and the bytes (`alt=media`, `/download/…`), with ranges and
/// conditions.
extension JSONAPI {
    /// The conditions a JSON API call carries: generation preconditions (query), HTTP validators (headers), and
    /// the `generation` it names. Entity tags may be sent bare, as the resource's `etag` reads.
    static func conditions(_ call: JSONCall) throws(ServiceError) -> Conditions {
        var conditions = try RequestConditions.parse(call.query, call.headers)
        conditions.ifMatch = conditions.ifMatch?.quotingBareTags()
        conditions.ifNoneMatch = conditions.ifNoneMatch?.quotingBareTags()
        conditions.selectedGeneration = try RequestConditions.integer(call.query, "generation")
        return conditions
    }

    func getMetadata(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse {
        switch try await service.metadata(
            of: object, caller: call.caller, conditions: try Self.conditions(call),
            ensureDownloadToken: false, call.context)
        {
        case .current(let meta): return objectResponse(call, meta)
        case .notModified(let meta): return Self.notModified(meta)
        }
    }

    func download(_ call: JSONCall, _ object: ObjectPath) async throws -> HTTPResponse {
        let options = ReadOptions(
            conditions: try Self.conditions(call), range: RequestConditions.range(call.headers),
            headOnly: call.request.isHead, ensureDownloadToken: false,
            acceptsGzip: AcceptEncoding.acceptsGzip(call.headers["Accept-Encoding"]))
        let content: ObjectContent
        switch try await service.read(object, caller: call.caller, options: options, call.context) {
        case .notModified(let meta): return Self.notModified(meta)
        case .content(let c): content = c
        }
        let meta = content.metadata
        var headers = HTTPHeaders()
        headers.add("Content-Type", ServedContentType.of(meta))
        if let disposition = meta.contentDisposition { headers.add("Content-Disposition", disposition) }
        ObjectHeaders.addRepresentation(meta, decompressed: content.decompressed, to: &headers)
        Self.setETag(meta, in: &headers)
        return content.httpResponse(headers: consume headers, record: call.record)
    }
}
