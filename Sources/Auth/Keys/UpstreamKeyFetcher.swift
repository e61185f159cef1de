public import PortcullisCore
public import Upstream

/// The production `KeyDocumentFetcher`: a buffered GET through the shared `UpstreamClient` (libcurl), with
/// the metric/circuit-breaker label `jwks`, a size cap, and `Cache-Control: max-age` read from the response.
///
/// A key fetch serves every request waiting on the keys, not one: it starts a trace of its own (`traces`), a
/// root span `jwks fetch` whose `traceparent` the GET carries.
public struct UpstreamKeyFetcher: KeyDocumentFetcher {
    private let client: UpstreamClient
    private let maxBytes: Int
    private let timeouts: UpstreamTimeouts
    private let traces: (any TraceRoots)?

    /// Key documents are small (Google's certificate map is ~4 KiB); `maxBytes` bounds a hostile one.
    public init(
        client: UpstreamClient, maxBytes: Int = 1 << 20,
        timeouts: UpstreamTimeouts = UpstreamTimeouts(connect: 5, firstByte: 10, idle: 10),
        traces: (any TraceRoots)? = nil
    ) {
        self.traces = traces
        self.client = client
        self.maxBytes = maxBytes
        self.timeouts = timeouts
    }

    public func fetch(_ url: String) async throws -> (body: [UInt8], maxAgeSeconds: Int?) {
        let trace = traces?.newTrace()
        var span = trace?.startRootSpan("jwks fetch")
        let request = UpstreamRequest(
            method: "GET", url: url, headers: [("Accept", "application/json, application/x-pem-file, */*")],
            timeouts: timeouts, backend: "jwks", operation: "jwks", trace: span?.trace ?? trace)
        let status: Int, headers: [(String, String)], body: [UInt8]
        do {
            (status, headers, body) = try await client.fetch(request, maxBytes: maxBytes)
        } catch {
            span?.setError(error.description)
            span?.end()
            throw error
        }
        span?.setAttribute("http.response.status_code", status)
        span?.end()
        guard (200..<300).contains(status) else {
            throw AuthError(.noKeys, "key document request answered HTTP \(status)")
        }
        let cacheControl = headers.last { $0.0.bytesEqualIgnoringASCIICase("cache-control") }?.1
        return (body, CacheControl.maxAge(cacheControl))
    }
}
