/// The v0 API's settings, from the configuration contract (DESIGN §6). Built by the executable.
public struct V0Configuration: Sendable {
    /// External base URL (`--public-url`) for upload and download URLs; nil → `http://{Host header}`.
    public var publicURL: String?
    /// Upload size ceiling (`--max-object-bytes`).
    public var maxObjectBytes: Int64
    /// Allowed browser origins (`--cors-origins`); `*` allows (and reflects) any origin.
    public var corsOrigins: [String]
    /// Largest JSON request body (metadata, PATCH, resumable start, the JSON part of a multipart upload).
    public var maxJSONBodyBytes: Int
    /// Staged resumable uploads untouched for this long are discarded by the backend.
    public var uploadIdleTimeoutSeconds: Int

    public static let defaultMaxObjectBytes: Int64 = 5 << 40  // 5 TiB

    public init(publicURL: String? = nil, maxObjectBytes: Int64 = V0Configuration.defaultMaxObjectBytes,
                corsOrigins: [String] = ["*"], maxJSONBodyBytes: Int = 1 << 20,
                uploadIdleTimeoutSeconds: Int = 7 * 24 * 3600) {
        self.publicURL = publicURL
        self.maxObjectBytes = maxObjectBytes
        self.corsOrigins = corsOrigins
        self.maxJSONBodyBytes = maxJSONBodyBytes
        self.uploadIdleTimeoutSeconds = uploadIdleTimeoutSeconds
    }
}
