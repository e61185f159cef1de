public import PortcullisCore

/// The timeouts a connection enforces. Each is measured on the monotonic clock.
public struct HTTPServerTimeouts: Sendable, Hashable {
    /// Time allowed for a complete request head, counted from its first byte (or, for the first request,
    /// from the accept): the slowloris defence. On expiry the server answers `408` and closes (silently when
    /// no byte arrived at all). Default 10 s.
    public var headerRead: Duration
    /// Time a keep-alive connection may sit idle between requests before it is closed silently. Default 60 s.
    public var idle: Duration
    /// Time allowed between body bytes while the responder is pulling the request body; on expiry its pull
    /// throws `ByteStreamError.timedOut` and the connection closes after the response. Also bounds the
    /// draining of an unread body. Default 30 s.
    public var bodyRead: Duration
    /// Time the socket may accept no response bytes while some are waiting (a stalled reader); on expiry the
    /// connection is aborted. Default 30 s.
    public var write: Duration
    /// After an error response, how long the server keeps reading (and discarding) before closing, so the
    /// client receives the response instead of a reset. Default 2 s.
    public var lingeringClose: Duration

    public init(
        headerRead: Duration = .seconds(10), idle: Duration = .seconds(60), bodyRead: Duration = .seconds(30),
        write: Duration = .seconds(30), lingeringClose: Duration = .seconds(2)
    ) {
        self.headerRead = headerRead
        self.idle = idle
        self.bodyRead = bodyRead
        self.write = write
        self.lingeringClose = lingeringClose
    }
}

/// Everything `HTTPServer` needs to run, with defaults fit for production behind a load balancer.
public struct HTTPServerConfiguration: Sendable {
    /// An IPv4 or IPv6 literal (`127.0.0.1`, `0.0.0.0`, `::1`, `[::]`) or a host name resolved at start.
    public var host: String
    /// The TCP port; 0 lets the kernel choose (`HTTPServer.start()` returns it).
    public var port: Int
    public var limits: HTTPParserLimits
    public var timeouts: HTTPServerTimeouts
    /// Connections served at once; beyond it the server stops accepting (the kernel backlog holds the rest).
    /// Default 4096.
    public var maxConnections: Int
    /// `listen(2)` backlog. Default 4096 (at least 1024 is used).
    public var backlog: Int
    /// Unread request body bytes the server discards after a response to keep the connection; a larger
    /// remainder closes it instead. Default 1 MiB.
    public var maxDrainBodyBytes: Int64
    /// The largest chunk pulled from a streamed response body at a time, so the largest single send of one. Default
    /// 96 KiB: a proxied 1 GiB download made 17,000 sends of 64 KiB against 11,500 of 96 KiB, at about a fifth more
    /// CPU per GiB (bench/NOTES.md, "Bulk transfers"); below 128 KiB the chunk's array stays under glibc's
    /// `mmap` threshold.
    public var responseChunkBytes: Int
    /// The event-loop driver connections run on (`EventLoopDriver.platformDefault`: epoll on Linux, Dispatch
    /// elsewhere). `start()` refuses a driver this platform does not have.
    public var eventLoop: EventLoopDriver
    /// TLS on the listener: every accepted connection runs a session of this factory before HTTP (nil: plain
    /// HTTP). The handshake must finish within the header-read timeout, like the first head.
    public var tls: (any TLSSessionFactory)?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, limits: HTTPParserLimits = HTTPParserLimits(),
        timeouts: HTTPServerTimeouts = HTTPServerTimeouts(), maxConnections: Int = 4096,
        backlog: Int = 4096, maxDrainBodyBytes: Int64 = 1024 * 1024, responseChunkBytes: Int = 96 * 1024,
        eventLoop: EventLoopDriver = .platformDefault, tls: (any TLSSessionFactory)? = nil
    ) {
        self.host = host
        self.port = port
        self.limits = limits
        self.timeouts = timeouts
        self.maxConnections = maxConnections
        self.backlog = backlog
        self.maxDrainBodyBytes = maxDrainBodyBytes
        self.responseChunkBytes = responseChunkBytes
        self.eventLoop = eventLoop
        self.tls = tls
    }
}

extension Duration {
    /// Whole nanoseconds, saturating.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (s, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : s &+ UInt64(attoseconds / 1_000_000_000)
    }
}
