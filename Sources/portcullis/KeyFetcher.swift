import Auth
import PortcullisCore

/// Fetches http(s) key documents for `--jwt-keys URL` / `--firebase-project`.
enum KeyFetcher {
    static func make(logger: Logger) -> any KeyDocumentFetcher { UnavailableFetcher() }
}

/// Placeholder until the Upstream client is merged: every fetch fails (and is logged by the key source).
private struct UnavailableFetcher: KeyDocumentFetcher {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String { "URL key sources need the Upstream HTTP client, not in this build" }
    }
    func fetch(_ url: String) async throws -> (body: [UInt8], maxAgeSeconds: Int?) { throw Unavailable() }
}
