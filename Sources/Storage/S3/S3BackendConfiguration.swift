/// Where and how an `S3Backend` reaches an S3-compatible service. Built by the executable; `fromEnvironment`
/// is a pure function of the variables the AWS SDKs read.
public struct S3BackendConfiguration: Sendable {
    public var bucket: String
    /// `https://s3.REGION.amazonaws.com` or any S3-compatible endpoint (no trailing slash).
    public var endpoint: String
    public var region: String
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?
    /// Path style (`endpoint/bucket/key`, emulators and most S3-compatibles) or virtual-host style
    /// (`bucket.host/key`, AWS default).
    public var pathStyle: Bool
    /// Bodies up to this size are sent as one PutObject; larger ones as a multipart upload of parts this big
    /// (≥ 5 MiB, S3's minimum part size; one part is held in memory per write).
    public var partBytes: Int
    /// Objects up to this size are copied (metadata updates, committing a multipart write) with one CopyObject;
    /// larger ones with a multipart UploadPartCopy. S3's CopyObject limit is 5 GiB.
    public var maxSingleCopyBytes: Int64

    public init(
        bucket: String, endpoint: String? = nil, region: String = "us-east-1", accessKeyID: String,
        secretAccessKey: String, sessionToken: String? = nil, pathStyle: Bool? = nil,
        partBytes: Int = 8 * 1024 * 1024, maxSingleCopyBytes: Int64 = 5 << 30
    ) {
        self.bucket = bucket
        let base = endpoint ?? "https://s3.\(region).amazonaws.com"
        self.endpoint = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.region = region
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.pathStyle = pathStyle ?? (endpoint != nil)
        self.partBytes = max(5 * 1024 * 1024, partBytes)
        self.maxSingleCopyBytes = min(5 << 30, max(0, maxSingleCopyBytes))
    }

    /// `AWS_ENDPOINT_URL_S3` (else `AWS_ENDPOINT_URL`), `AWS_REGION` (else `AWS_DEFAULT_REGION`, else
    /// us-east-1), `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`. A custom endpoint
    /// implies path style unless `AWS_S3_ADDRESSING_STYLE=virtual`.
    public static func fromEnvironment(_ environment: [String: String], bucket: String) throws(StorageError)
        -> S3BackendConfiguration
    {
        func value(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        guard let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") else {
            throw .invalidArgument("s3://\(bucket): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        let endpoint = value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL")
        var pathStyle: Bool?
        if let style = value("AWS_S3_ADDRESSING_STYLE") { pathStyle = style == "path" }
        return S3BackendConfiguration(
            bucket: bucket, endpoint: endpoint,
            region: value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1",
            accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"),
            pathStyle: pathStyle)
    }
}
