#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor plus a byte range of it: what the HTTP server sends with `sendfile`, so object bytes
/// go from the page cache to the socket without entering user space.
///
/// Owns the descriptor: it is closed exactly once, when the region is deallocated. Because blob files are
/// immutable and named by generation, a reader holding a region keeps reading its generation even after an
/// overwrite or delete unlinks the file.
public final class FileRegion: Sendable {
    public let descriptor: Int32
    public let offset: Int64
    public let length: Int64

    public init(descriptor: Int32, offset: Int64, length: Int64) {
        self.descriptor = descriptor
        self.offset = offset
        self.length = length
    }

    deinit { close(descriptor) }
}
