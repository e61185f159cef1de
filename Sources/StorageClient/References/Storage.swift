public import Foundation
import PortcullisCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Entry point of the SDK: a v0 server (Portcullis, the Firebase emulator, or production) plus the caller's
/// auth token provider. Mirrors `Storage` of the Firebase SDKs.
public final class Storage: Sendable {
    /// `scheme://host[:port]`, without a trailing slash.
    public let baseURL: String
    /// The bucket `reference()` uses; nil when the storage was created without one.
    public let bucket: String?
    /// Returns the current ID token, or nil for anonymous calls. Sent as `Authorization: <scheme> <token>`
    /// with `settings.authorizationScheme`.
    public let tokenProvider: (@Sendable () async throws -> String?)?
    public let settings: StorageSettings

    /// `url` is `http(s)://host[:port]` or `http(s)://host[:port]/v0/b/BUCKET`.
    public init(
        url: String, tokenProvider: (@Sendable () async throws -> String?)? = nil,
        settings: StorageSettings = StorageSettings()
    ) throws(StorageError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host,
            scheme == "http" || scheme == "https"
        else {
            throw StorageError(.invalidArgument, "Storage URL must be http(s)://host[:port][/v0/b/bucket]: \(url)")
        }
        let port = components.port.map { ":\($0)" } ?? ""
        // An IPv6 literal: Foundation on Linux keeps its brackets in `host`, Darwin strips them.
        let hostPart = host.utf8.contains(UInt8(ascii: ":")) && !host.bytesHasPrefix("[") ? "[\(host)]" : host
        baseURL = "\(scheme)://\(hostPart)\(port)"
        let segments = components.path.bytesSplit(separator: UInt8(ascii: "/"))
        if segments.count >= 3, segments[0] == "v0", segments[1] == "b" {
            bucket = segments[2].removingPercentEncoding ?? segments[2]
        } else if segments.isEmpty {
            bucket = nil
        } else {
            throw StorageError(.invalidArgument, "Storage URL path must be empty or /v0/b/BUCKET: \(url)")
        }
        self.tokenProvider = tokenProvider
        self.settings = settings
    }

    /// A storage for `bucket` served at `host` (`"127.0.0.1:8080"`).
    public init(
        bucket: String, host: String, scheme: String = "http",
        tokenProvider: (@Sendable () async throws -> String?)? = nil, settings: StorageSettings = StorageSettings()
    ) {
        baseURL = "\(scheme)://\(host)"
        self.bucket = bucket
        self.tokenProvider = tokenProvider
        self.settings = settings
    }

    /// The root of the default bucket. Traps without a default bucket; use `reference(forURL:)` then.
    public func reference() -> StorageReference {
        guard let bucket else { preconditionFailure("Storage has no default bucket; use reference(forURL:)") }
        return StorageReference(storage: self, path: StoragePath(bucket: bucket, object: ""))
    }

    public func reference(withPath path: String) -> StorageReference { reference().child(path) }

    /// Accepts `gs://`, v0 `http(s)://…/v0/b/B/o/…` and `https://storage.googleapis.com/B/…` URLs.
    public func reference(forURL url: String) throws(StorageError) -> StorageReference {
        StorageReference(storage: self, path: try StoragePath.parse(url: url))
    }

    // MARK: Requests

    /// The v0 URL of an object (or the bucket collection when `object` is empty), with a query.
    func url(for path: StoragePath, query: [(String, String)] = []) -> URL {
        var text = baseURL + "/v0/b/" + Self.encode(path.bucket) + "/o"
        if !path.object.isEmpty { text += "/" + Self.encode(path.object) }
        if !query.isEmpty {
            text += "?" + query.map { Self.encode($0.0) + "=" + Self.encode($0.1) }.joined(separator: "&")
        }
        return URL(string: text)!
    }

    /// `encodeURIComponent`: everything but the unreserved set is percent-encoded, `/` included.
    static func encode(_ string: String) -> String { PercentEncoding.uriComponent.encode(string) }

    func request(
        _ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil,
        authorize: Bool = true
    ) async throws(StorageError) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = settings.requestTimeout
        request.setValue("portcullis-swift/1", forHTTPHeaderField: "X-Firebase-Storage-Version")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if authorize, let tokenProvider {
            do {
                if let token = try await tokenProvider(), !token.isEmpty {
                    request.setValue("\(settings.authorizationScheme) \(token)", forHTTPHeaderField: "Authorization")
                }
            } catch {
                throw StorageError(.unauthenticated, "The token provider failed: \(error)")
            }
        }
        request.httpBody = body
        return request
    }

    /// Runs a buffered request with the SDKs' retry policy: network errors, 5xx, 408 and 429 are retried with
    /// exponential backoff and jitter until `settings.maxOperationRetryTime` is spent.
    func perform(_ request: URLRequest, successCodes: Set<Int> = [200], limit: Int = 16 << 20)
        async throws(StorageError) -> (HTTPURLResponse, Data)
    {
        let deadline = Date().addingTimeInterval(settings.maxOperationRetryTime)
        var delay = settings.initialRetryDelay
        while true {
            do {
                try Task.checkCancellation()
                let (response, data) = try await StreamingCall.data(request, limit: limit)
                if successCodes.contains(response.statusCode) { return (response, data) }
                let error = Self.error(status: response.statusCode, body: data)
                guard Self.isRetryable(status: response.statusCode) else { throw error }
                guard Date().addingTimeInterval(delay) < deadline else {
                    throw StorageError(
                        .retryLimitExceeded, "Retry limit exceeded; last error: \(error.message)",
                        httpStatus: response.statusCode, serverResponse: error.serverResponse)
                }
            } catch let error as StorageError {
                throw error
            } catch is CancellationError {
                throw .cancelled()
            } catch {
                if Task.isCancelled { throw .cancelled() }
                guard Date().addingTimeInterval(delay) < deadline else {
                    throw StorageError(
                        .retryLimitExceeded,
                        "Retry limit exceeded; last error: \(NetworkFailure.describe(error, url: request.url))")
                }
            }
            do { try await Task.sleep(nanoseconds: UInt64((delay + Double.random(in: 0...delay / 2)) * 1e9)) } catch {
                throw .cancelled()
            }
            delay = min(delay * 2, 64)
        }
    }

    static func isRetryable(status: Int) -> Bool { status >= 500 || status == 408 || status == 429 }

    /// Maps an error response to a `StorageError`, keeping the server's JSON message.
    static func error(status: Int, body: Data) -> StorageError {
        let text = String(decoding: body, as: UTF8.self)
        var message = "HTTP \(status)"
        if let json = try? JSONValue.parse(Array(body)), let serverMessage = json["error"]?["message"]?.stringValue {
            message = serverMessage
        }
        return StorageError(
            StorageErrorCode.from(httpStatus: status), message, httpStatus: status, serverResponse: text)
    }
}

/// Timeouts and retry budgets (the Firebase defaults: 2 minutes for operations, 10 for uploads).
public struct StorageSettings: Sendable {
    public var maxOperationRetryTime: TimeInterval = 120
    public var maxUploadRetryTime: TimeInterval = 600
    public var maxDownloadRetryTime: TimeInterval = 600
    public var initialRetryDelay: TimeInterval = 1
    public var requestTimeout: TimeInterval = 60
    /// Upload chunk size; rounded to the server's granularity.
    public var uploadChunkSize: Int = 8 << 20
    /// The `Authorization` scheme the token is sent with: `Firebase` (what the Firebase SDKs send) or `Bearer`.
    /// Portcullis accepts both, for ID tokens and for its admin key.
    public var authorizationScheme: String = "Firebase"
    public init() {}
}
