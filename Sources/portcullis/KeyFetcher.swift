import Auth
import Foundation
import FoundationNetworking
import PortcullisCore

/// Fetches http(s) key documents for `--jwt-keys URL` / `--firebase-project`.
///
/// Stop-gap over FoundationNetworking (libcurl underneath) until the gateway's `Upstream` client provides one:
/// a plain GET with a 10 s timeout, 2xx only, the body capped at 1 MiB, `Cache-Control: max-age` passed on.
enum KeyFetcher {
    static func make(logger: Logger) -> any KeyDocumentFetcher { FoundationKeyFetcher() }
}

private struct FoundationKeyFetcher: KeyDocumentFetcher {
    struct FetchError: Error, CustomStringConvertible {
        let description: String
    }

    static let maxBytes = 1 << 20

    func fetch(_ url: String) async throws -> (body: [UInt8], maxAgeSeconds: Int?) {
        guard let target = URL(string: url) else { throw FetchError(description: "invalid URL \(url)") }
        var request = URLRequest(url: target, timeoutInterval: 10)
        request.setValue("application/json, application/x-pem-file, */*", forHTTPHeaderField: "Accept")
        let (data, response): (Data, URLResponse) = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: FetchError(description: "GET \(url): \(error.localizedDescription)"))
                } else if let data, let response {
                    continuation.resume(returning: (data, response))
                } else {
                    continuation.resume(throwing: FetchError(description: "GET \(url): no response"))
                }
            }.resume()
        }
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            throw FetchError(description: "GET \(url): HTTP \(status)")
        }
        guard data.count <= Self.maxBytes else { throw FetchError(description: "GET \(url): document too large") }
        return ([UInt8](data), CacheControl.maxAge(http.value(forHTTPHeaderField: "Cache-Control")))
    }
}
