/// The seam between the HTTP server's connections and a TLS implementation: the server drives a session on
/// its event loop without knowing the library behind it (HTTPServer links no C library), and the library's
/// wrapper (Crypto's OpenSSL one) conforms without knowing the server.
///
/// A session owns no descriptor: it reads and writes the non-blocking socket it was made for, and every call
/// returns at once. A call that cannot go on reports what it waits for — readability or writability of the
/// socket, which may be the opposite of the call's own direction (a handshake step, a session ticket) — and is
/// repeated with the same arguments once the socket is ready.
public enum TLSIOResult: Sendable, Equatable {
    /// Bytes of plaintext read into, or taken from, the caller's buffer (never 0).
    case bytes(Int)
    /// Call again once the socket is readable.
    case wantRead
    /// Call again once the socket is writable.
    case wantWrite
    /// The peer ended the session (`close_notify`, or the TCP stream ended).
    case closed
    /// The session failed (handshake refused, bad record, reset); the connection is over.
    case failed
    /// The peer sent a plain HTTP request where the handshake belongs: the session is over, and the socket may
    /// carry one plaintext answer saying so.
    case plainHTTP
}

/// One TLS session over one accepted socket, confined to the connection's event loop.
public protocol TLSSession: AnyObject {
    /// Reads plaintext into `buffer`; the first reads run the handshake.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> TLSIOResult
    /// Decrypted bytes held inside the session, readable now without the socket becoming readable again.
    var pendingPlaintext: Int { get }
    /// Encrypts and sends bytes from `buffer`; after `wantRead`/`wantWrite` repeat it with the same bytes.
    func write(_ buffer: UnsafeRawBufferPointer) -> TLSIOResult
    /// Sends `close_notify` if the socket takes it now; never waits (the TCP close follows either way).
    func shutdown()
    /// Why the session failed, for the log (library text, never key material); nil when it has not.
    var failureReason: String? { get }
}

/// Makes the TLS sessions of a listener: holds the current certificate and key, which may be replaced while
/// connections are open (each session keeps the one it started with).
public protocol TLSSessionFactory: Sendable {
    /// A session for the accepted, non-blocking socket `descriptor`; nil when the library cannot make one.
    func makeSession(descriptor: Int32) -> (any TLSSession)?
}
