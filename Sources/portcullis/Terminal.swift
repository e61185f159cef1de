#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout/stderr and leaving with a status, without Foundation's buffered streams (lines must be
/// out before `exit`).
enum Terminal {
    static func print(_ text: String) { write(1, text.hasSuffix("\n") ? text : text + "\n") }

    static func printError(_ text: String) { write(2, text.hasSuffix("\n") ? text : text + "\n") }

    /// Prints `portcullis: MESSAGE` on stderr and exits (2 = usage or configuration error).
    static func fail(_ message: String, code: Int32 = 2) -> Never {
        printError("portcullis: \(message)")
        exit(code)
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes {
                Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Reads a whole (small) file: keys, rules, test cases. Failures become a one-line reason.
    static func readFile(_ path: String, limit: Int = 16 << 20) -> Result<[UInt8], FileReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(FileReadError(reason: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            return .failure(FileReadError(reason: "is a directory"))
        }
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(FileReadError(reason: String(cString: strerror(errno))))
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[..<n])
            if out.count > limit { return .failure(FileReadError(reason: "larger than \(limit) bytes")) }
        }
        return .success(out)
    }

    struct FileReadError: Error {
        let reason: String
    }
}
