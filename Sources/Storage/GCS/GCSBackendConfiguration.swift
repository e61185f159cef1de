import PortcullisCore

/// Where and how a `GCSBackend` reaches Google Cloud Storage. Built by the executable (the library never reads
/// env vars or files): `fromEnvironment` is a pure function of the variables and the credentials file's bytes.
public struct GCSBackendConfiguration: Sendable {
    /// How requests are authorised.
    public enum Credentials: Sendable {
        /// No `Authorization` header (`STORAGE_EMULATOR_HOST`, exactly as Google's SDKs treat it).
        case none
        /// A service account: RS256 JWT assertion → OAuth2 access token, cached and refreshed before expiry.
        case serviceAccount(clientEmail: String, privateKeyPEM: String, tokenURI: String)
    }

    /// Bucket name on the GCS side (`gs://BUCKET`).
    public var bucket: String
    /// `https://storage.googleapis.com` or an emulator's `http://host:port` (no trailing slash).
    public var endpoint: String
    public var credentials: Credentials
    /// Bytes per upload chunk sent to the session (a multiple of 256 KiB; the per-upload memory bound).
    public var uploadChunkBytes: Int
    public var timeouts: UpstreamTimeoutsValue

    public init(
        bucket: String, endpoint: String = "https://storage.googleapis.com", credentials: Credentials = .none,
        uploadChunkBytes: Int = 512 * 1024, timeouts: UpstreamTimeoutsValue = .init()
    ) {
        self.bucket = bucket
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.credentials = credentials
        self.uploadChunkBytes = max(256 * 1024, uploadChunkBytes / (256 * 1024) * (256 * 1024))
        self.timeouts = timeouts
    }

    /// The configuration Google's SDKs would derive: `STORAGE_EMULATOR_HOST` (`host:port` or a URL) wins and
    /// means no credentials; otherwise `credentialsJSON` (the bytes of the file `GOOGLE_APPLICATION_CREDENTIALS`
    /// names, read by the caller) must be a service-account key.
    public static func fromEnvironment(
        _ environment: [String: String], bucket: String,
        credentialsJSON: [UInt8]?
    ) throws(StorageError) -> GCSBackendConfiguration {
        if let host = environment["STORAGE_EMULATOR_HOST"], !host.isEmpty {
            let endpoint = host.hasPrefix("http://") || host.hasPrefix("https://") ? host : "http://\(host)"
            return GCSBackendConfiguration(bucket: bucket, endpoint: endpoint, credentials: .none)
        }
        guard let credentialsJSON else {
            throw .invalidArgument("gs://\(bucket): set STORAGE_EMULATOR_HOST or GOOGLE_APPLICATION_CREDENTIALS")
        }
        let json: JSONValue
        do { json = try JSONValue.parse(credentialsJSON) } catch {
            throw .invalidArgument("GOOGLE_APPLICATION_CREDENTIALS is not JSON: \(error)")
        }
        guard json["type"]?.stringValue == "service_account", let email = json["client_email"]?.stringValue,
            let key = json["private_key"]?.stringValue
        else {
            throw .invalidArgument("GOOGLE_APPLICATION_CREDENTIALS must be a service-account key file")
        }
        let tokenURI = json["token_uri"]?.stringValue ?? "https://oauth2.googleapis.com/token"
        return GCSBackendConfiguration(
            bucket: bucket,
            credentials: .serviceAccount(
                clientEmail: email, privateKeyPEM: key,
                tokenURI: tokenURI))
    }
}

/// Per-call upstream timeouts in seconds (mirrors `Upstream.UpstreamTimeouts`, kept here so the public
/// configuration does not re-export the Upstream module).
public struct UpstreamTimeoutsValue: Sendable, Equatable {
    public var connect: Double
    public var firstByte: Double
    public var idle: Double
    public init(connect: Double = 5, firstByte: Double = 30, idle: Double = 30) {
        self.connect = connect
        self.firstByte = firstByte
        self.idle = idle
    }
}
