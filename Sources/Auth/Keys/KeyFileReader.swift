import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads key files off the cooperative pool (file I/O blocks), bounded in size.
enum KeyFileReader {
    struct Stamp: Equatable, Sendable {
        let modified: Int64
        let size: Int64
    }

    private static let queue = DispatchQueue(label: "portcullis.auth.keyfiles")

    static func stamp(_ path: String) async -> Stamp? {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: stampNow(path)) }
        }
    }

    static func read(_ path: String, limit: Int) async -> Result<([UInt8], Stamp?), AuthError> {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: readNow(path, limit: limit)) }
        }
    }

    private static func stampNow(_ path: String) -> Stamp? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Stamp(
            modified: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec), size: Int64(st.st_size))
    }

    private static func readNow(_ path: String, limit: Int) -> Result<([UInt8], Stamp?), AuthError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(AuthError(.noKeys, "cannot open key file \(path): errno \(errno)")) }
        defer { close(fd) }
        let stampBefore = stampNow(path)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(AuthError(.noKeys, "cannot read key file \(path): errno \(errno)"))
            }
            if n == 0 { break }
            out.append(contentsOf: buffer[..<n])
            guard out.count <= limit else {
                return .failure(AuthError(.noKeys, "key file \(path) is larger than \(limit) bytes"))
            }
        }
        return .success((out, stampBefore))
    }
}
