#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket calls whose spelling differs between Linux and Darwin, in one place, so the connection layer
/// itself depends on the platform only through the event-loop driver it is given.
///
/// Every call here is non-blocking on a non-blocking descriptor and reports failure as `-1` with `errno`
/// set, as the underlying call does.
enum Posix {
    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    static func listen(_ fd: Int32, backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(fd, backlog)
        #else
        Darwin.listen(fd, backlog)
        #endif
    }

    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer.baseAddress, buffer.count)
        #else
        Darwin.read(fd, buffer.baseAddress, buffer.count)
        #endif
    }

    /// `send` that never raises `SIGPIPE` (Linux: `MSG_NOSIGNAL`; Darwin: `SO_NOSIGPIPE`, set by
    /// `prepareAccepted`).
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        #else
        Darwin.send(fd, buffer.baseAddress, buffer.count, 0)
        #endif
    }

    /// Sends up to `count` bytes of `file` from `offset` to the socket without copying them through user
    /// space. Returns the bytes sent, 0 at the end of the file, or -1.
    static func sendFile(to socket: Int32, from file: Int32, offset: Int64, count: Int) -> Int {
        #if canImport(Glibc)
        var position = off_t(offset)
        return Glibc.sendfile(socket, file, &position, count)
        #else
        var length = off_t(count)
        let result = Darwin.sendfile(file, socket, off_t(offset), &length, nil, 0)
        // Darwin reports partial progress with EAGAIN and the count sent in `length`.
        if length > 0 { return Int(length) }
        return result == 0 ? 0 : -1
        #endif
    }

    /// The type of a TCP stream socket, for `socket(2)` and `getaddrinfo`.
    static var streamSocketType: Int32 {
        #if canImport(Glibc)
        Int32(SOCK_STREAM.rawValue)
        #else
        SOCK_STREAM
        #endif
    }

    /// Shuts down our sending side (the peer reads an end of stream; we may still read).
    static func shutdownOutput(_ fd: Int32) { _ = shutdown(fd, Int32(SHUT_WR)) }

    /// Makes the next `close` send a reset instead of a clean end (`SO_LINGER` 0): a client reading a
    /// close-delimited or partial body then sees an error, not an end.
    static func resetOnClose(_ fd: Int32) {
        var value = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    /// Sets an accepted socket up for the connection layer: non-blocking, close-on-exec, `TCP_NODELAY` (we
    /// write whole heads and chunks; Nagle would delay the last segment), and no `SIGPIPE` on Darwin.
    static func prepareAccepted(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }
}
