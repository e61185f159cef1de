import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport failure (no HTTP answer) in one short sentence for messages and logs, instead of Foundation's
/// error dump: `could not connect to 127.0.0.1:9 (connection refused)`, `could not resolve host x.invalid`.
enum NetworkFailure {
    static func describe(_ error: any Error, url: URL?) -> String {
        let host = url?.host ?? "the server"
        let endpoint = url.flatMap { $0.port }.map { "\(host):\($0)" } ?? host
        guard let error = error as? URLError else { return "\(error)" }
        switch error.code {
        case .cannotConnectToHost: return "could not connect to \(endpoint) (connection refused)"
        case .cannotFindHost, .dnsLookupFailed: return "could not resolve host \(host)"
        case .timedOut: return "\(endpoint) did not answer in time"
        case .networkConnectionLost: return "the connection to \(endpoint) was lost"
        case .notConnectedToInternet: return "no network connection"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return "TLS with \(endpoint) failed"
        case .badServerResponse: return "\(endpoint) sent a malformed response"
        default: return "request to \(endpoint) failed (URL error \(error.code.rawValue))"
        }
    }
}
