public import HTTPServer
public import PortcullisCore
public import Service

extension ObjectContent {
    /// The response carrying these bytes with `headers`: 200 for the whole object, 206 with `Content-Range`
    /// for a range (recorded on `record` for the access log); a HEAD (no body) gets the `Content-Length`.
    ///
    /// Every surface builds its object-bytes responses here, so this is where `UserContentIsolation` is
    /// applied: user content must never run script on the gateway's origin, whatever surface or URL (token,
    /// signature, credential) served it.
    ///
    /// `headers` is consumed: the isolation fields are added to the caller's own buffer, not to a copy of it.
    public func httpResponse(headers: consuming HTTPHeaders, record: AccessRecord) -> HTTPResponse {
        UserContentIsolation.apply(to: &headers)
        var response = HTTPResponse(status: 200, headers: consume headers)
        if let range {
            response.status = 206
            response.headers.add("Content-Range", "bytes \(range.offset)-\(range.last)/\(metadata.size)")
            record.range = "\(range.offset)-\(range.last)"
        }
        switch body {
        case nil:
            // A HEAD answers with the framing its GET would have: the length, or chunked when it is unknown.
            if let length {
                response.headers.add("Content-Length", String(length))
            } else {
                response.body = .stream(BufferByteStream.empty(), length: nil)
            }
        case .file(let region)?: response.body = .file(region)
        case .bytes(let bytes)?: response.body = .bytes(bytes)
        case .stream(let stream)?: response.body = .stream(stream, length: length)
        }
        return response
    }
}

extension ObjectMetadata {
    /// The 304 answer for this object: its validators (and its `Cache-Control` where the surface repeats it) and
    /// the isolation headers its 200 would carry, no body. With `httpResponse(headers:record:)`, the one place
    /// object answers get `UserContentIsolation`.
    public func notModifiedResponse(withCacheControl: Bool) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("ETag") { EntityTag.appendQuoted(self, to: &$0) }
        headers.add("Last-Modified") { self.updated.appendHTTPDate(to: &$0) }
        if withCacheControl, let cacheControl { headers.add("Cache-Control", cacheControl) }
        UserContentIsolation.apply(to: &headers)
        return HTTPResponse(status: 304, headers: headers)
    }
}
