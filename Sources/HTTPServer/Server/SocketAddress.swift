#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolving, binding and describing socket addresses.
enum SocketAddress {
    /// Creates a listening, non-blocking TCP socket on `host:port` and returns it with the bound port.
    static func listen(host: String, port: Int, backlog: Int) throws(HTTPServerError) -> (fd: Int32, port: Int) {
        var literal = host
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        guard (0...65535).contains(port) else { throw .invalidAddress("\(host):\(port)") }

        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Posix.streamSocketType
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(literal.isEmpty ? nil : literal, String(port), &hints, &result)
        guard status == 0, let info = result else {
            throw .invalidAddress("\(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(info) }

        let fd = socket(info.pointee.ai_family, Posix.streamSocketType, 0)
        guard fd >= 0 else { throw .socket("socket", errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let error = errno
            Posix.close(fd)
            throw .socket("bind \(host):\(port)", error)
        }
        guard Posix.listen(fd, backlog: Int32(clamping: max(1024, backlog))) == 0 else {
            let error = errno
            Posix.close(fd)
            throw .socket("listen", error)
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)

        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Self.port(of: storage))
    }

    static func port(of storage: sockaddr_storage) -> Int {
        var storage = storage
        return withUnsafePointer(to: &storage) { pointer in
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin_port))
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            default:
                return 0
            }
        }
    }

    private static func string(_ cString: [CChar]) -> String {
        let bytes = cString.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `ip:port` or `[ip]:port`.
    static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return withUnsafePointer(to: &storage) { pointer in
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var address = sin.pointee.sin_addr
                    inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                    return "\(Self.string(text)):\(UInt16(bigEndian: sin.pointee.sin_port))"
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var address = sin6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                    return "[\(Self.string(text))]:\(UInt16(bigEndian: sin6.pointee.sin6_port))"
                }
            default:
                return "unknown"
            }
        }
    }
}
