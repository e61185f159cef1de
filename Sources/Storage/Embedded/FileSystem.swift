import PortcullisCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin throwing wrappers over the POSIX calls of the embedded backend.
///
/// Every function blocks: call them only from a `BlockingPool` lane (or at start-up), never from the
/// cooperative pool. Errors become `StorageError` here, keeping `strerror` text for logs; a full disk is
/// `.unavailable` (an operator problem the client may retry), anything else `.internalError`.
enum FileSystem {
    static func failure(_ operation: String, _ path: String, code: Int32 = errno) -> StorageError {
        let message = "\(operation) \(path): \(String(cString: strerror(code)))"
        if code == ENOSPC || code == EDQUOT { return .unavailable(reason: message, retryAfter: nil) }
        return .internalError(message)
    }

    /// Creates `path` (one level) unless it exists.
    static func makeDirectory(_ path: String) throws(StorageError) {
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw failure("mkdir", path) }
    }

    /// Creates `path` and any missing parents (`mkdir -p`).
    static func makeDirectories(_ path: String) throws(StorageError) {
        var prefix = path.bytesHasPrefix("/") ? "/" : ""
        for component in path.bytesSplit(separator: UInt8(ascii: "/")) {
            prefix += component
            try makeDirectory(prefix)
            prefix += "/"
        }
    }

    /// Creates a new file for writing; `exclusive` refuses an existing file.
    static func create(_ path: String, exclusive: Bool) throws(StorageError) -> Int32 {
        let flags = O_RDWR | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : 0)
        let fd = open(path, flags, 0o600)
        if fd < 0 { throw failure("open", path) }
        return fd
    }

    /// Opens an existing file read-only; nil when it does not exist.
    static func openForReading(_ path: String) throws(StorageError) -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw failure("open", path)
        }
        return fd
    }

    /// Writes every byte at `offset` (retrying short writes and EINTR).
    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, path: String) throws(StorageError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + Int64(done)))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("write", path)
            }
            done += n
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many (0 at end of file).
    static func read(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64,
        path: String
    ) throws(StorageError) -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress!, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw failure("read", path) }
        }
    }

    static func close(_ fd: Int32) { _ = posixClose(fd) }

    /// The whole of a file expected to hold exactly `count` bytes; nil when it does not exist or holds a
    /// different number (a blob is written once, so either means it is not the file the caller knows).
    static func readWhole(_ path: String, count: Int) throws(StorageError) -> [UInt8]? {
        guard let fd = try openForReading(path) else { return nil }
        defer { close(fd) }
        // One byte more than expected, to tell a longer file from an exact one.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count + 1, alignment: 1)
        defer { buffer.deallocate() }
        var done = 0
        while done < buffer.count {
            let n = try read(
                fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: Int64(done), path: path)
            if n == 0 { break }
            done += n
        }
        guard done == count else { return nil }
        return Array(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }

    static func sync(_ fd: Int32, path: String) throws(StorageError) {
        EventLoopThreads.assertMayBlock("fsync of \(path)")
        if fsync(fd) != 0 { throw failure("fsync", path) }
    }

    /// Makes a file's bytes durable, and its size with them (`fdatasync(2)`: metadata needed to read the data
    /// back — the size — is flushed; timestamps are not). Where `fdatasync` does not exist, `fsync`.
    static func syncData(_ fd: Int32, path: String) throws(StorageError) {
        EventLoopThreads.assertMayBlock("fdatasync of \(path)")
        #if os(Linux)
        if fdatasync(fd) != 0 { throw failure("fdatasync", path) }
        #else
        if fsync(fd) != 0 { throw failure("fsync", path) }
        #endif
    }

    /// Starts the write-back of a byte range's dirty pages and returns without waiting (Linux
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so the disk works while more bytes arrive and a later sync
    /// waits only for what is still in flight. Not a durability point (no metadata, no device cache flush): the
    /// caller still syncs. A no-op elsewhere; a failure is ignored (the sync reports real I/O errors).
    static func startWriteback(_ fd: Int32, offset: Int64, count: Int64) {
        #if os(Linux)
        guard count > 0, let syncFileRange = LinuxCalls.syncFileRange else { return }
        _ = syncFileRange(fd, offset, count, LinuxCalls.syncFileRangeWrite)
        #endif
    }

    /// Makes a rename or unlink inside `path` durable.
    static func syncDirectory(_ path: String) throws(StorageError) {
        EventLoopThreads.assertMayBlock("fsync of the directory \(path)")
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw failure("open", path) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw failure("fsync", path) }
    }

    static func rename(_ from: String, to: String) throws(StorageError) {
        if posixRename(from, to) != 0 { throw failure("rename", from) }
    }

    /// A second name for the same bytes (used to publish a staged upload without copying it).
    static func link(_ from: String, to: String) throws(StorageError) {
        if posixLink(from, to) != 0 { throw failure("link", from) }
    }

    /// Removes the empty directory `path`; a missing or non-empty one is left as it is.
    @discardableResult
    static func removeDirectory(_ path: String) -> Bool {
        rmdir(path) == 0
    }

    /// Removes `path`; a missing file is not an error. Returns whether a file was removed.
    @discardableResult
    static func remove(_ path: String) -> Bool {
        unlink(path) == 0
    }

    static func truncate(_ fd: Int32, to size: Int64, path: String) throws(StorageError) {
        if ftruncate(fd, off_t(size)) != 0 { throw failure("ftruncate", path) }
    }

    static func size(of fd: Int32, path: String) throws(StorageError) -> Int64 {
        var info = stat()
        if fstat(fd, &info) != 0 { throw failure("fstat", path) }
        return Int64(info.st_size)
    }

    /// Seconds since the epoch of the last modification, nil when the file is gone.
    static func modificationTime(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_mtim.tv_sec)
    }

    /// Entry names of a directory, without `.` and `..`; empty when it does not exist.
    static func entries(of path: String) -> [String] {
        (DirectoryEntries.names(in: path) ?? []).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Tries to take an advisory lock without waiting. Returns false when another holder conflicts.
    static func tryLock(_ fd: Int32, exclusive: Bool) -> Bool {
        flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0
    }

    /// `tryLock` (exclusive) that allows a holder ~20 ms to let go before answering false: a lock released
    /// by its owner's `close` lives on while a child the process spawned at that moment still shares the
    /// descriptor, between its fork and its exec (`O_CLOEXEC` closes it only then). A staging file's owner
    /// that is really appending holds its lock far longer. Blocking: call on the blocking pool. `pause` runs
    /// between attempts (tests pass one that acts instead of sleeping).
    static func tryLockPatiently(_ fd: Int32, pause: () -> Void = { usleep(2_000) }) -> Bool {
        for _ in 0..<10 {
            if tryLock(fd, exclusive: true) { return true }
            pause()
        }
        return tryLock(fd, exclusive: true)
    }

    static func lock(_ fd: Int32, exclusive: Bool) {
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 && errno == EINTR {}
    }

    /// The absolute, symlink-free form of an existing path (the registry key of a directory).
    static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A random 128-bit identifier in lowercase hex (temp file names, staging ids).
    static func randomIdentifier() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

#if os(Linux)
/// Linux calls Swift's Glibc module does not import (declared only under `_GNU_SOURCE`), looked up once at run
/// time instead of through a C module of our own.
private enum LinuxCalls {
    typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
    /// `sync_file_range(2)` (glibc ≥ 2.6); nil if the C library lacks it.
    static let syncFileRange: SyncFileRange? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range")
        .map { unsafeBitCast($0, to: SyncFileRange.self) }
    /// `SYNC_FILE_RANGE_WRITE` (<linux/fs.h>, stable ABI).
    static let syncFileRangeWrite: UInt32 = 2
}
#endif

// Module-level aliases: inside `FileSystem`, `rename`/`link` name the static methods.
private func posixRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
private func posixLink(_ from: String, _ to: String) -> Int32 { link(from, to) }
private func posixClose(_ fd: Int32) -> Int32 { close(fd) }
