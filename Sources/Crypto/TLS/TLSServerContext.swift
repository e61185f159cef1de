internal import COpenSSL
public import PortcullisCore
import Synchronization

/// A listener's TLS identity: the certificate chain and private key, with the protocol settings of
/// `pc_tls_server_ctx_new` (TLS 1.2 minimum, ALPN `http/1.1`, no compression or renegotiation). It makes the
/// sessions of accepted connections (`TLSSessionFactory`).
///
/// `replace` swaps in a new certificate and key (SIGHUP) without touching open connections: each session holds
/// a reference to the OpenSSL context it was made from, so the old one lives until its last session ends. A
/// pair that does not load is refused and the current one stays.
public final class TLSServerContext: TLSSessionFactory, Sendable {
    /// The current `SSL_CTX`; replaced whole, never mutated after it is built (OpenSSL contexts are safe to
    /// share between threads once configured).
    private let current: Mutex<ContextBox>

    /// Loads `certificatePEM` (the leaf first, then any intermediates) and `privateKeyPEM`; throws when either
    /// does not parse or the key does not match the certificate.
    public init(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) throws(CryptoError) {
        current = Mutex(try ContextBox(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM))
    }

    /// Replaces the certificate and key for new connections; throws (keeping the current pair) when they do not
    /// load.
    public func replace(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) throws(CryptoError) {
        let box = try ContextBox(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM)
        current.withLock { $0 = box }
    }

    public func makeSession(descriptor: Int32) -> (any TLSSession)? {
        let box = current.withLock { $0 }
        guard let ssl = pc_tls_session_new(box.context, descriptor) else {
            pc_err_clear()
            return nil
        }
        return OpenSSLSession(ssl: ssl)
    }
}

/// Owns one configured `SSL_CTX` (freed when the last reference goes; sessions hold their own).
private final class ContextBox: Sendable {
    nonisolated(unsafe) let context: OpaquePointer

    init(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) throws(CryptoError) {
        var reason = [CChar](repeating: 0, count: 320)
        let made = certificatePEM.withUnsafeBufferPointer { cert in
            privateKeyPEM.withUnsafeBufferPointer { key in
                reason.withUnsafeMutableBufferPointer { reasonBuffer in
                    pc_tls_server_ctx_new(
                        cert.baseAddress, cert.count, key.baseAddress, key.count, reasonBuffer.baseAddress,
                        reasonBuffer.count)
                }
            }
        }
        guard let made else {
            throw CryptoError(.invalidCertificate, TLSText.string(reason))
        }
        context = made
    }

    deinit { SSL_CTX_free(context) }
}

/// One server session over a socket, driven by the connection's event loop (see `TLSSession`).
final class OpenSSLSession: TLSSession {
    private let ssl: OpaquePointer
    private(set) var failureReason: String?

    init(ssl: OpaquePointer) { self.ssl = ssl }

    deinit { SSL_free(ssl) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TLSIOResult {
        outcome { pc_tls_read(ssl, buffer.baseAddress, buffer.count, $0, $1) }
    }

    var pendingPlaintext: Int { Int(SSL_pending(ssl)) }

    func write(_ buffer: UnsafeRawBufferPointer) -> TLSIOResult {
        outcome { pc_tls_write(ssl, buffer.baseAddress, buffer.count, $0, $1) }
    }

    func shutdown() { pc_tls_shutdown(ssl) }

    private func outcome(_ call: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> TLSIOResult {
        var reason = [CChar](repeating: 0, count: 256)
        let n = reason.withUnsafeMutableBufferPointer { call($0.baseAddress!, $0.count) }
        if n > 0 { return .bytes(Int(n)) }
        switch n {
        case Int32(PC_TLS_WANT_READ): return .wantRead
        case Int32(PC_TLS_WANT_WRITE): return .wantWrite
        case Int32(PC_TLS_CLOSED): return .closed
        case Int32(PC_TLS_PLAIN_HTTP): return .plainHTTP
        default:
            failureReason = TLSText.string(reason)
            return .failed
        }
    }
}

enum TLSText {
    /// The NUL-terminated C text in `buffer`.
    static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
