import PortcullisCore

/// An open file receiving bytes at increasing offsets.
///
/// Confinement: used and closed from one `BlockingPool` lane at a time, each use ordered after the last (an
/// awaited `run`, or `UploadPipeline`'s single write lane), hence `@unchecked Sendable`. The descriptor is
/// closed exactly once (`close()` or deinit).
final class FileAppender: @unchecked Sendable {
    let path: String
    private(set) var descriptor: Int32
    private(set) var position: Int64

    init(path: String, descriptor: Int32, position: Int64) {
        self.path = path
        self.descriptor = descriptor
        self.position = position
    }

    deinit { close() }

    func append(_ bytes: [UInt8]) throws(StorageError) {
        guard !bytes.isEmpty else { return }
        try FileSystem.write(descriptor, bytes, at: position, path: path)
        position += Int64(bytes.count)
    }

    func append(_ batch: BodyBatch) throws(StorageError) {
        for piece in batch.pieces { try append(piece) }
    }

    /// Starts writing back the bytes appended since `start` without waiting for them (not a durability point).
    func startWriteback(from start: Int64) {
        FileSystem.startWriteback(descriptor, offset: start, count: position - start)
    }

    /// Makes the file's bytes and size durable (`fdatasync`: the size is flushed with the data; the name is
    /// the directory's business, synced by whoever created or renamed it).
    func sync() throws(StorageError) { try FileSystem.syncData(descriptor, path: path) }

    func close() {
        if descriptor >= 0 {
            FileSystem.close(descriptor)
            descriptor = -1
        }
    }
}
