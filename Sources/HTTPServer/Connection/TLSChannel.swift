import PortcullisCore

/// A connection's TLS session and the one piece of state it adds to the connection machine: `retry`, the
/// socket readiness a TLS call waits for when that is not the call's own direction — a read that must write
/// (a handshake flight or session ticket meeting a full socket) or a write that must read. The connection adds
/// it to its interest and repeats the waiting call when it arrives.
///
/// Everything else maps onto the plain-socket states: the handshake runs inside the first reads of
/// `readingHead` (so the header-read timeout bounds it, as it bounds a first head), `wantRead` from a read is
/// `EAGAIN`, `wantWrite` from a write is a full socket (the write stall deadline runs), `closed` is the end of
/// input, and `failed` ends the connection.
final class TLSChannel {
    let session: any TLSSession
    var retry: IOInterest = []
    /// The client spoke plain HTTP: the session is given up and the connection answers it in plaintext
    /// (a 400 saying the port speaks HTTPS), then closes.
    var abandoned = false

    init(_ session: any TLSSession) { self.session = session }
}

extension HTTPConnection {
    /// The TLS session the socket's bytes pass through now: nil for plain HTTP, or once the session is
    /// abandoned for a client that spoke plain HTTP.
    var activeTLS: TLSChannel? {
        guard let tls, !tls.abandoned else { return nil }
        return tls
    }

    /// `readInput` for a TLS connection: reads plaintext until the session holds none, so no decrypted byte
    /// waits inside OpenSSL for a readiness that will not come (the socket is drained already).
    func readTLSInput(_ tls: TLSChannel, minimum: Int) -> Bool {
        var progressed = false
        var want = minimum
        while true {
            let result = tls.session.read(into: input.writable(minimum: want))
            switch result {
            case .bytes(let n):
                input.didWrite(n)
                progressed = true
                let pending = tls.session.pendingPlaintext
                if pending == 0 { return true }
                want = pending
            case .wantRead:
                return progressed
            case .wantWrite:
                tls.retry = .write
                return progressed
            case .closed:
                input.endOfInput = true
                return true
            case .plainHTTP:
                // Only a first record can be a request line; anywhere else it is a failed session.
                guard case .readingHead = state else {
                    input.endOfInput = true
                    return true
                }
                tls.abandoned = true
                respondWithError(HTTPParseError(status: 400, message: "this port speaks HTTPS; use an https:// URL"))
                return true
            case .failed:
                if !progressed, case .readingHead(let reading) = state, reading.wait == .firstHead {
                    context.logger.debug(
                        "TLS handshake failed",
                        [("remote", .string(remoteAddress)), ("reason", .string(tls.session.failureReason ?? ""))])
                }
                input.endOfInput = true
                return true
            }
        }
    }
}
