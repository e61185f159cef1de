import PortcullisCore

/// Fetches a key document over HTTP(S). Implemented over the `Upstream` client in the gateway
/// (`UpstreamKeyFetcher`) and by tests over a loopback server.
public protocol KeyDocumentFetcher: Sendable {
    /// The response body of a successful (2xx) GET and the `Cache-Control: max-age` it carried, if any.
    /// Throws for transport errors and non-2xx statuses.
    func fetch(_ url: String) async throws -> (body: [UInt8], maxAgeSeconds: Int?)
}

/// `Cache-Control` parsing for fetchers.
public enum CacheControl {
    /// The `max-age` seconds of a `Cache-Control` value (`public, max-age=19462, must-revalidate` → 19462),
    /// nil when absent or invalid; `no-store`/`no-cache` count as 0.
    public static func maxAge(_ header: String?) -> Int? {
        guard let header else { return nil }
        var result: Int?
        for part in header.bytesSplit(separator: UInt8(ascii: ",")) {
            let directive = part.trimmingSpaces().lowercased()
            if directive == "no-store" || directive == "no-cache" { return 0 }
            if let argument = directive.bytesRemovingPrefix("max-age=") {
                let value = argument.trimmingASCII { $0 == UInt8(ascii: "\"") }
                guard let seconds = Int(value), seconds >= 0 else { return nil }
                result = seconds
            }
        }
        return result
    }
}
