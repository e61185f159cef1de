public import Events
public import HTTPServer
public import PortcullisCore

/// Everything `portcullis serve` is configured with (docs/configuration.md), as an immutable value.
///
/// Built by `ConfigurationParser` from flags and environment (flags win); file options hold paths only — the
/// executable reads the files. `validate()` is the single place that rejects bad values, with a one-line message.
public struct GatewayConfiguration: Sendable, Equatable {
    public var listen: ListenAddress = .init(host: "127.0.0.1", port: 8080)
    /// Buckets in the order they were given; names are unique.
    public var buckets: [BucketBinding] = [BucketBinding(name: "default-bucket", backend: .file(directory: "./data"))]
    public var rulesFile: String?
    public var jwtKeys: String?
    public var jwtIssuer: String?
    public var jwtAudience: String?
    public var firebaseProject: String?
    public var jwtHMACSecretFile: String?
    public var jwtLeewaySeconds: Int = 60
    public var signingKeyFile: String?
    public var adminKeyFile: String?
    /// Without a trailing slash.
    public var publicURL: String?
    public var corsOrigins: CORSOrigins = .any
    public var maxObjectBytes: Int64 = 5 << 40
    public var logFormat: LogFormat = .json
    public var logLevel: Logger.Level = .info
    public var drainTimeout: Duration = .seconds(25)
    public var uploadIdleTimeout: Duration = .seconds(86_400)
    public var headerTimeout: Duration = .seconds(10)
    public var idleTimeout: Duration = .seconds(60)
    public var maxConnections: Int = 4096
    /// How long one upstream call may wait in total, retries and backoff included
    /// (`UpstreamConfiguration.requestDeadline`).
    public var upstreamTimeout: Duration = .seconds(30)
    /// Development only: `Bearer owner` acts as admin (`--dev-trust-emulator-owner`).
    public var devTrustEmulatorOwner = false
    /// Whether `/console` is served (`--console`).
    public var console: Bool = true
    /// The console's own listener (`--console-listen`): when set, the console is served there only.
    public var consoleListen: ListenAddress?
    /// Where buckets created through the API live (`--bucket-root file:DIR`); nil: buckets are configuration.
    public var bucketRoot: String?
    /// Change-event receivers, validated, in the order given (docs/events.md); empty: no events.
    public var eventWebhooks: [Webhook] = []
    public var eventsSecretFile: String?
    /// The HTTP server's event-loop driver (docs/architecture.md).
    public var eventLoop: EventLoopDriver = .platformDefault
    /// The service-accounts file (`--service-accounts`): accounts whose key files obtain access tokens here.
    public var serviceAccountsFile: String?
    /// `--signed-url-accounts`: the signers whose signed URLs are honoured.
    public var signedURLAccounts: [SignedURLAccountSpec] = []
    /// The PEM certificate chain and key files for TLS on the listeners (`--tls-cert`/`--tls-key`); both or
    /// neither. Read by the executable, at start and on SIGHUP.
    public var tlsCertFile: String?
    public var tlsKeyFile: String?
    /// Where spans are exported (`--otlp-endpoint`); nil: no spans.
    public var otlpEndpoint: String?
    /// Share of traces started here that are recorded (`--trace-sample-ratio`; nil: 1 when exporting).
    public var traceSampleRatio: Double?
    /// The S3 API's listener (`--s3-listen`); nil: no S3 API.
    public var s3Listen: ListenAddress?
    /// `--s3-domain`: virtual-host style under this name.
    public var s3Domain: String?
    /// `--s3-keys`: the access keys file, read by the executable at start and on SIGHUP.
    public var s3KeysFile: String?
    /// `--s3-region`: what GetBucketLocation reports.
    public var s3Region = "us-east-1"

    public init() {}

    /// The bucket a name maps to, if configured.
    public func bucket(named name: String) -> BucketBinding? { buckets.first { $0.name.bytesEqual(name) } }

    /// Checks every value and the combinations between them; throws the first problem found.
    public func validate() throws(ConfigurationError) {
        guard (0...65_535).contains(listen.port) else {
            throw .invalidValue(option: .listen, value: String(listen.port), reason: "port must be 0-65535")
        }
        guard !buckets.isEmpty else {
            throw .invalidValue(option: .bucket, value: "", reason: "at least one bucket is required")
        }
        var seen = Set<String>()
        for binding in buckets {
            if let problem = BucketBinding.nameProblem(binding.name) {
                throw .invalidValue(option: .bucket, value: binding.name, reason: problem)
            }
            guard seen.insert(binding.name).inserted else {
                throw .invalidValue(option: .bucket, value: binding.name, reason: "bucket configured twice")
            }
        }
        if firebaseProject != nil {
            for (option, value) in [
                (ConfigurationOption.jwtKeys, jwtKeys), (.jwtIssuer, jwtIssuer), (.jwtAudience, jwtAudience),
            ]
            where value != nil {
                throw .conflict("--firebase-project sets the issuer, audience and keys itself; drop --\(option.flag)")
            }
        } else if jwtIssuer != nil || jwtAudience != nil, jwtKeys == nil, jwtHMACSecretFile == nil {
            throw .conflict("--jwt-issuer/--jwt-audience need --jwt-keys or --jwt-hmac-secret to verify tokens with")
        }
        guard (0...3600).contains(jwtLeewaySeconds) else {
            throw .invalidValue(option: .jwtLeeway, value: String(jwtLeewaySeconds), reason: "must be 0-3600 seconds")
        }
        guard maxObjectBytes > 0 else {
            throw .invalidValue(option: .maxObjectBytes, value: String(maxObjectBytes), reason: "must be positive")
        }
        guard (1...1_000_000).contains(maxConnections) else {
            throw .invalidValue(option: .maxConnections, value: String(maxConnections), reason: "must be 1-1000000")
        }
        guard eventLoop.isAvailable else {
            throw .invalidValue(option: .eventLoop, value: eventLoop.rawValue, reason: "not available on this platform")
        }
        for (option, value) in [
            (ConfigurationOption.headerTimeout, headerTimeout), (.idleTimeout, idleTimeout),
            (.uploadIdleTimeout, uploadIdleTimeout), (.upstreamTimeout, upstreamTimeout),
        ]
        where value <= .zero {
            throw .invalidValue(option: option, value: "\(value)", reason: "must be positive")
        }
        if traceSampleRatio != nil, otlpEndpoint == nil {
            throw .conflict("--trace-sample-ratio samples exported traces; set --otlp-endpoint too")
        }
        if let consoleListen {
            guard console else { throw .conflict("--console-listen serves the console; drop --console off") }
            guard (0...65_535).contains(consoleListen.port) else {
                throw .invalidValue(
                    option: .consoleListen, value: String(consoleListen.port), reason: "port must be 0-65535")
            }
            if consoleListen.port != 0, consoleListen.port == listen.port {
                throw .conflict("--console-listen must use another port than --listen (\(listen.port))")
            }
        }
        if let s3Listen {
            guard (0...65_535).contains(s3Listen.port) else {
                throw .invalidValue(option: .s3Listen, value: String(s3Listen.port), reason: "port must be 0-65535")
            }
            if s3Listen.port != 0, s3Listen.port == listen.port {
                throw .conflict("--s3-listen must use another port than --listen (\(listen.port))")
            }
        } else if s3Domain != nil || s3KeysFile != nil {
            throw .conflict("--s3-domain and --s3-keys configure the S3 API; set --s3-listen too")
        }
        if (tlsCertFile == nil) != (tlsKeyFile == nil) {
            throw .conflict("--tls-cert and --tls-key go together: give both or neither")
        }
        if serviceAccountsFile == nil,
            signedURLAccounts.contains(where: { if case .registered = $0 { true } else { false } })
        {
            throw .conflict("--signed-url-accounts names accounts of --service-accounts; give that file too")
        }
        if drainTimeout < .zero {
            throw .invalidValue(option: .drainTimeout, value: "\(drainTimeout)", reason: "must not be negative")
        }
    }
}

/// `HOST:PORT` as given to `--listen`; `host` has no brackets (an IPv6 literal is `::1`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var isIPv6: Bool { host.contains(":") }

    /// `127.0.0.1:8080` or `[::1]:8080`.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// One `--bucket NAME=URL`.
public struct BucketBinding: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var backend: BackendLocation

    public init(name: String, backend: BackendLocation) {
        self.name = name
        self.backend = backend
    }

    public var description: String { "\(name)=\(backend)" }

    /// Why `name` cannot be a bucket name, or nil. Bucket names travel in one URL segment and in metric-free
    /// log fields, so they are kept to the GCS character set.
    static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "bucket name is empty" }
        if name.utf8.count > 222 { return "bucket name is longer than 222 characters" }
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                continue
            default:
                return "bucket name may only contain letters, digits, '-', '_' and '.'"
            }
        }
        return nil
    }
}

/// Where a bucket's bytes live, chosen by URL scheme (docs/configuration.md).
public enum BackendLocation: Sendable, Equatable, CustomStringConvertible {
    /// `file:DIR` — the embedded backend.
    case file(directory: String)
    /// `gs://BUCKET` — Google Cloud Storage (or its emulator via `STORAGE_EMULATOR_HOST`).
    case gcs(bucket: String)
    /// `s3://BUCKET` — S3 or a compatible store (`AWS_ENDPOINT_URL`).
    case s3(bucket: String)

    public var description: String {
        switch self {
        case .file(let directory): "file:\(directory)"
        case .gcs(let bucket): "gs://\(bucket)"
        case .s3(let bucket): "s3://\(bucket)"
        }
    }

    /// The scheme as a short label (`file`, `gcs`, `s3`) for logs and metrics.
    public var kind: String {
        switch self {
        case .file: "file"
        case .gcs: "gcs"
        case .s3: "s3"
        }
    }
}

/// `--cors-origins`: any origin, or an exact list.
public enum CORSOrigins: Sendable, Equatable, CustomStringConvertible {
    case any
    case only([String])

    public func allows(_ origin: String) -> Bool {
        switch self {
        case .any: true
        case .only(let list): list.contains(origin)
        }
    }

    public var description: String {
        switch self {
        case .any: "*"
        case .only(let list): list.joined(separator: ",")
        }
    }
}
