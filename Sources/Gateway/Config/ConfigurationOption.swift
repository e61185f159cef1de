import HTTPServer

/// One `portcullis serve` option: its flag, its environment variable and its default, described once so the
/// parser, `serve --help` and docs/configuration.md cannot drift apart.
public struct ConfigurationOption: Sendable, Equatable {
    /// The flag without its leading dashes (`listen` for `--listen`).
    public let flag: String
    /// What the value looks like in help output (`HOST:PORT`).
    public let valueName: String
    public let environment: String
    /// The default as shown to humans; nil when the option is simply absent by default.
    public let defaultText: String?
    public let summary: String
    /// Repeatable flags collect every occurrence; their env var is a comma-separated list.
    public let repeatable: Bool
    /// A switch takes no value: `--flag` turns it on (`--flag=false` off); its env var is `1`/`true`/`yes` or
    /// `0`/`false`/`no`.
    public let isSwitch: Bool

    public init(
        flag: String, valueName: String, environment: String, defaultText: String?, summary: String,
        repeatable: Bool = false, isSwitch: Bool = false
    ) {
        self.flag = flag
        self.valueName = valueName
        self.environment = environment
        self.defaultText = defaultText
        self.summary = summary
        self.repeatable = repeatable
        self.isSwitch = isSwitch
    }
}

extension ConfigurationOption {
    public static let listen = ConfigurationOption(
        flag: "listen", valueName: "HOST:PORT", environment: "PORTCULLIS_LISTEN", defaultText: "127.0.0.1:8080",
        summary:
            "Address to bind: IPv4 `1.2.3.4:8080`, IPv6 `[::1]:8080`, or `localhost:8080`; port 0 picks a free port.")
    public static let bucket = ConfigurationOption(
        flag: "bucket", valueName: "NAME=URL", environment: "PORTCULLIS_BUCKETS",
        defaultText: "default-bucket=file:./data",
        summary:
            "Bucket and its backend: `file:DIR` (embedded), `gs://BUCKET` (GCS), `s3://BUCKET` (S3). Repeatable; env is comma-separated.",
        repeatable: true)
    public static let rules = ConfigurationOption(
        flag: "rules", valueName: "FILE", environment: "PORTCULLIS_RULES", defaultText: nil,
        summary:
            "Firebase Storage rules file; reloaded on SIGHUP (a bad new file keeps the old rules). Without it every request is denied."
    )
    public static let jwtKeys = ConfigurationOption(
        flag: "jwt-keys", valueName: "SRC", environment: "PORTCULLIS_JWT_KEYS", defaultText: nil,
        summary: "File or http(s) URL with PEM keys/certificates, a JWKS, or a Google x509 certificate map.")
    public static let jwtIssuer = ConfigurationOption(
        flag: "jwt-issuer", valueName: "ISS", environment: "PORTCULLIS_JWT_ISSUER", defaultText: nil,
        summary: "Required `iss` claim.")
    public static let jwtAudience = ConfigurationOption(
        flag: "jwt-audience", valueName: "AUD", environment: "PORTCULLIS_JWT_AUDIENCE", defaultText: nil,
        summary: "Required `aud` claim.")
    public static let firebaseProject = ConfigurationOption(
        flag: "firebase-project", valueName: "ID", environment: "PORTCULLIS_FIREBASE_PROJECT", defaultText: nil,
        summary: "Accept Firebase ID tokens of this project (sets issuer, audience and Google's key URL).")
    public static let jwtHMACSecret = ConfigurationOption(
        flag: "jwt-hmac-secret", valueName: "FILE", environment: "PORTCULLIS_JWT_HMAC_SECRET_FILE", defaultText: nil,
        summary: "File holding an HMAC secret: HS256/384/512 tokens are accepted only when this is set.")
    public static let jwtLeeway = ConfigurationOption(
        flag: "jwt-leeway", valueName: "SECONDS", environment: "PORTCULLIS_JWT_LEEWAY", defaultText: "60",
        summary: "Clock skew allowed when checking `exp`, `nbf`, `iat` (0-3600).")
    public static let signingKey = ConfigurationOption(
        flag: "signing-key", valueName: "FILE", environment: "PORTCULLIS_SIGNING_KEY_FILE", defaultText: nil,
        summary:
            "HMAC key(s) for cursors, upload URLs and signed URLs: lines `KEYID:BASE64SECRET` (first signs, all verify) or one raw secret. Random per process if absent (warning)."
    )
    public static let adminKey = ConfigurationOption(
        flag: "admin-key", valueName: "FILE", environment: "PORTCULLIS_ADMIN_KEY_FILE", defaultText: nil,
        summary:
            "File holding the admin key: `Authorization: Bearer <key>` (or `Firebase <key>`) bypasses rules and may manage download tokens."
    )
    public static let publicURL = ConfigurationOption(
        flag: "public-url", valueName: "URL", environment: "PORTCULLIS_PUBLIC_URL", defaultText: nil,
        summary: "External base URL (http/https) used in upload and download URLs behind a load balancer.")
    public static let corsOrigins = ConfigurationOption(
        flag: "cors-origins", valueName: "LIST", environment: "PORTCULLIS_CORS_ORIGINS", defaultText: "*",
        summary: "Allowed browser origins, comma-separated (`https://app.example.com`), or `*`.")
    public static let maxObjectBytes = ConfigurationOption(
        flag: "max-object-bytes", valueName: "N", environment: "PORTCULLIS_MAX_OBJECT_BYTES", defaultText: "5TiB",
        summary: "Upload size ceiling in bytes; suffixes KiB, MiB, GiB, TiB (and K, M, G, T = powers of 1000) accepted."
    )
    public static let logFormat = ConfigurationOption(
        flag: "log-format", valueName: "json|text", environment: "PORTCULLIS_LOG_FORMAT", defaultText: "json",
        summary: "Access and event log format.")
    public static let logLevel = ConfigurationOption(
        flag: "log-level", valueName: "LEVEL", environment: "PORTCULLIS_LOG_LEVEL", defaultText: "info",
        summary: "Event log threshold: debug, info, warning, error (the access log is always written).")
    public static let drainTimeout = ConfigurationOption(
        flag: "drain-timeout", valueName: "DURATION", environment: "PORTCULLIS_DRAIN_TIMEOUT", defaultText: "25",
        summary:
            "After SIGTERM/SIGINT, how long in-flight requests may finish before exit (seconds, or `500ms`, `30s`, `2m`)."
    )
    public static let uploadIdleTimeout = ConfigurationOption(
        flag: "upload-idle-timeout", valueName: "DURATION", environment: "PORTCULLIS_UPLOAD_IDLE_TIMEOUT",
        defaultText: "86400", summary: "How long an unfinished resumable upload may stay idle before it is discarded.")
    public static let headerTimeout = ConfigurationOption(
        flag: "header-timeout", valueName: "DURATION", environment: "PORTCULLIS_HEADER_TIMEOUT", defaultText: "10",
        summary: "Time allowed to receive a complete request head (slowloris defence; 408 and close).")
    public static let idleTimeout = ConfigurationOption(
        flag: "idle-timeout", valueName: "DURATION", environment: "PORTCULLIS_IDLE_TIMEOUT", defaultText: "60",
        summary: "How long an idle keep-alive connection stays open.")
    public static let maxConnections = ConfigurationOption(
        flag: "max-connections", valueName: "N", environment: "PORTCULLIS_MAX_CONNECTIONS", defaultText: "4096",
        summary: "Open client connections accepted at once; further connections wait in the listen backlog.")
    public static let upstreamTimeout = ConfigurationOption(
        flag: "upstream-timeout", valueName: "DURATION", environment: "PORTCULLIS_UPSTREAM_TIMEOUT", defaultText: "30s",
        summary:
            "Overall wait for one upstream call (gs://, s3://, key URLs) across its retries and backoff; past it the request fails with 504."
    )
    public static let devTrustEmulatorOwner = ConfigurationOption(
        flag: "dev-trust-emulator-owner", valueName: "", environment: "PORTCULLIS_DEV_TRUST_EMULATOR_OWNER",
        defaultText: "off",
        summary:
            "Development only: `Authorization: Bearer owner` (what the Firebase tools send to emulators) acts as admin. Never in production; a warning is logged at start when on.",
        isSwitch: true)
    public static let eventsWebhook = ConfigurationOption(
        flag: "events-webhook", valueName: "URL", environment: "PORTCULLIS_EVENTS_WEBHOOKS", defaultText: nil,
        summary:
            "http(s) URL that receives every object change event (finalized, metadataUpdated, deleted) as a CloudEvent. Repeatable; env is comma-separated. None: no events are recorded.",
        repeatable: true)
    public static let eventsSecret = ConfigurationOption(
        flag: "events-secret", valueName: "FILE", environment: "PORTCULLIS_EVENTS_SECRET_FILE", defaultText: nil,
        summary:
            "File holding the HMAC secret that signs events (`Portcullis-Signature`). Absent: events are sent unsigned (warning)."
    )
    public static let eventLoop = ConfigurationOption(
        flag: "event-loop", valueName: "epoll|dispatch", environment: "PORTCULLIS_EVENT_LOOP",
        defaultText: EventLoopDriver.platformDefault.rawValue,
        summary:
            "Connection event-loop driver: `epoll` (our own threads in epoll_wait, one per core; Linux only, the default there and the fastest) or `dispatch` (read/write DispatchSources on one serial queue per core; portable, the default elsewhere). Behaviour is the same; the choice is logged at start and exported as portcullis_build_info{event_loop}."
    )

    /// Every `serve` option, in help order.
    public static let all: [ConfigurationOption] = [
        .listen, .bucket, .rules, .jwtKeys, .jwtIssuer, .jwtAudience, .firebaseProject, .jwtHMACSecret, .jwtLeeway,
        .signingKey, .adminKey, .publicURL, .corsOrigins, .maxObjectBytes, .logFormat, .logLevel, .drainTimeout,
        .uploadIdleTimeout, .headerTimeout, .idleTimeout, .maxConnections,
        .upstreamTimeout, .devTrustEmulatorOwner, .console, .consoleListen, .bucketRoot, .eventsWebhook, .eventsSecret,
        .eventLoop, .serviceAccounts, .signedURLAccounts,
        .tlsCert, .tlsKey,
        .s3Listen, .s3Domain, .s3Keys, .s3Region,
        .otlpEndpoint, .traceSampleRatio,
    ]
}
