public import Auth
public import Upstream

/// Fetches JWT key documents (`--jwt-keys URL`, `--firebase-project`) through the shared `UpstreamClient`:
/// a GET with short timeouts, 2xx only, at most 1 MiB, passing `Cache-Control: max-age` on to the key source.
public struct UpstreamKeyFetcher: KeyDocumentFetcher {
    public static let maxDocumentBytes = 1 << 20
    private let client: UpstreamClient

    public init(client: UpstreamClient) { self.client = client }

    public struct FetchError: Error, CustomStringConvertible {
        public let description: String
    }

    public func fetch(_ url: String) async throws -> (body: [UInt8], maxAgeSeconds: Int?) {
        let request = UpstreamRequest(
            url: url, headers: [("Accept", "application/json, application/x-pem-file, */*")],
            timeouts: UpstreamTimeouts(connect: 5, firstByte: 10, idle: 10), backend: "jwt-keys", operation: "fetch")
        let response = try await client.fetch(request, maxBytes: Self.maxDocumentBytes)
        guard (200..<300).contains(response.status) else {
            throw FetchError(description: "GET \(url): HTTP \(response.status)")
        }
        let cacheControl = response.headers.first { HTTPHeaderName.equal($0.0, "Cache-Control") }?.1
        return (response.body, CacheControl.maxAge(cacheControl))
    }
}

/// ASCII case-insensitive header-name comparison.
enum HTTPHeaderName {
    static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { x, y in
            (x >= 65 && x <= 90 ? x | 0x20 : x) == (y >= 65 && y <= 90 ? y | 0x20 : y)
        }
    }
}
