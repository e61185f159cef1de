import PortcullisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `send` achieved.
enum SendOutcome: Equatable {
    /// Everything is in the kernel.
    case flushed
    /// The socket is full: the rest waits for writability (and the buffer's stall deadline runs).
    case blocked
    /// The client is gone (`EPIPE`, `ECONNRESET`): the caller closes.
    case failed
}

extension HTTPConnection {
    /// Sends `output` until it is empty or the socket refuses more, counting the bytes into `exchange`.
    ///
    /// The stall deadline (`timeouts.write`) starts when the socket first refuses bytes and restarts whenever
    /// some are taken; it is cleared once everything is sent. A flushed buffer keeps its capacity only when
    /// small (a taken-over stream chunk is dropped, not kept), so idle connections hold no output storage.
    func send(_ output: inout SendBuffer, counting exchange: Exchange?) -> SendOutcome {
        var progressed = false
        while !output.isEmpty {
            let offset = output.offset
            if let tls = activeTLS {
                let result = output.bytes.withUnsafeBytes { buffer in
                    tls.session.write(UnsafeRawBufferPointer(rebasing: buffer[offset...]))
                }
                switch result {
                case .bytes(let n):
                    output.offset += n
                    progressed = true
                    if let exchange {
                        exchange.bytesOut += Int64(n)
                        if exchange.firstByteAt == nil && exchange.responseStarted { exchange.firstByteAt = loop.now() }
                    }
                    continue
                case .wantRead, .wantWrite:
                    if result == .wantRead { tls.retry = .read }
                    if !output.isStalled || progressed { output.stallDeadline = loop.now() &+ timeouts.write }
                    return .blocked
                case .closed, .failed, .plainHTTP:
                    return .failed
                }
            }
            let n = output.bytes.withUnsafeBytes { buffer in
                Posix.send(descriptor, UnsafeRawBufferPointer(rebasing: buffer[offset...]))
            }
            if n > 0 {
                output.offset += n
                progressed = true
                if let exchange {
                    exchange.bytesOut += Int64(n)
                    if exchange.firstByteAt == nil && exchange.responseStarted { exchange.firstByteAt = loop.now() }
                }
                continue
            }
            let error = errno
            if n < 0 && error == EINTR { continue }
            if n < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
                if !output.isStalled || progressed { output.stallDeadline = loop.now() &+ timeouts.write }
                return .blocked
            }
            return .failed
        }
        output.bytes.removeAll(keepingCapacity: output.bytes.capacity <= 16 * 1024)
        output.offset = 0
        output.stallDeadline = .max
        reportBuffered(0)
        return .flushed
    }
}
