import PortcullisCore

/// An open file receiving bytes at increasing offsets, optionally checksumming them as they pass.
///
/// Confinement: created, used and closed from `BlockingPool` lanes, one call at a time (the async caller
/// awaits each call before the next), so the continuation hand-offs order all accesses; hence
/// `@unchecked Sendable`. The descriptor is closed exactly once (`close()` or deinit).
final class FileAppender: @unchecked Sendable {
    let path: String
    private(set) var descriptor: Int32
    private(set) var position: Int64
    private var checksum: BodyChecksum?

    init(path: String, descriptor: Int32, position: Int64, computeChecksums: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.position = position
        checksum = computeChecksums ? BodyChecksum() : nil
    }

    /// Makes this appender continue `checksum` — the running checksum of exactly the bytes before
    /// `position` — or compute none (nil). Call before the first `append`.
    func continueChecksum(_ checksum: BodyChecksum?) {
        self.checksum = checksum
    }

    deinit { close() }

    func append(_ bytes: [UInt8]) throws(StorageError) {
        guard !bytes.isEmpty else { return }
        checksum?.update(bytes)
        try FileSystem.write(descriptor, bytes, at: position, path: path)
        position += Int64(bytes.count)
    }

    func sync() throws(StorageError) { try FileSystem.sync(descriptor, path: path) }

    /// Checksums of everything appended (only when created with `computeChecksums`).
    func checksums() -> ObjectChecksums? { checksum?.finish() }

    /// The running (unfinished) checksum, to be continued by a later appender.
    var runningChecksum: BodyChecksum? { checksum }

    func close() {
        if descriptor >= 0 {
            FileSystem.close(descriptor)
            descriptor = -1
        }
    }
}
