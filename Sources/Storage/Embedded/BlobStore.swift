import PortcullisCore

/// The blob files of one directory: receiving bodies into temp files, publishing them under their final,
/// immutable name, and removing them (reads open blobs on a reader lane, `EmbeddedBackend.read`). All file
/// I/O here runs on `pool`; checksums of received bodies on `hashers`, beside the writes (`UploadPipeline`).
///
/// Durability order of a write: bytes → `fdatasync(temp)` (bytes and size) → `rename(temp, blob)` →
/// `fsync(blob dir)`; only then may the index row that names the blob be committed. A crash before the commit leaves a blob without a
/// row, which start-up garbage collection removes.
struct BlobStore: Sendable {
    let layout: DirectoryLayout
    let pool: BlockingPool
    /// Lanes for MD5/CRC32C of bodies being received: CPU work, one lane per core.
    let hashers: BlockingPool

    /// A fully received, synced body in a temp file.
    struct Received: Sendable {
        let tempPath: String
        let checksums: ObjectChecksums
    }

    /// A pipeline into `file` (write lane from `pool`) continuing `checksum`.
    func pipeline(into file: FileAppender, checksum: RunningChecksum?) -> UploadPipeline {
        UploadPipeline(file: file, checksum: checksum, writeLane: pool.lane())
    }

    /// A new running checksum on a hash lane from `hashers`.
    func runningChecksum() -> RunningChecksum { RunningChecksum(lane: hashers.lane()) }

    /// Streams `body` into a new temp file while computing MD5 and CRC32C. More than `expectedSize` bytes
    /// fails early with `.sizeMismatch`. On any failure the temp file is removed.
    func receive(_ body: any ByteStream, expectedSize: Int64?) async throws(StorageError) -> Received {
        let path = layout.newTempFile()
        let file = try await pool.run { () throws(StorageError) -> FileAppender in
            FileAppender(path: path, descriptor: try FileSystem.create(path, exclusive: true), position: 0)
        }
        let checksum = runningChecksum()
        let pipeline = pipeline(into: file, checksum: checksum)
        do throws(StorageError) {
            _ = try await BodyPump.pump(
                body, limit: expectedSize,
                overflow: { .sizeMismatch(expected: expectedSize ?? 0, actual: $0) }
            ) {
                (batch: BodyBatch) async throws(StorageError) in
                try await pipeline.submit(batch)
            }
            // The sync and the hash lane's tail overlap: `finish` waits for the writes only.
            _ = try await pipeline.finish(sync: true)
            await pipeline.close()
            return Received(tempPath: path, checksums: await checksum.value().finish())
        } catch {
            await pipeline.abandon { file in
                file.close()
                FileSystem.remove(path)
            }
            throw error
        }
    }

    /// Renames a received file (or hard-links a staged one, `keepSource`) to its blob name and makes the new
    /// directory entry durable. Returns the blob path.
    func publish(_ source: String, bucket: String, blobID: Int64, keepSource: Bool) async throws(StorageError) -> String
    {
        let directory = layout.blobDirectory(bucket: bucket)
        let target = layout.blobFile(bucket: bucket, blobID: blobID)
        try await pool.run { () throws(StorageError) in
            if keepSource { try FileSystem.link(source, to: target) } else { try FileSystem.rename(source, to: target) }
            try FileSystem.syncDirectory(directory)
        }
        return target
    }

    /// Removes a file, ignoring a missing one (best effort: garbage collection catches what this misses).
    func remove(_ path: String) async {
        await pool.runQuietly { FileSystem.remove(path) }
    }

    func removeBlob(bucket: String, blobID: Int64) async {
        await remove(layout.blobFile(bucket: bucket, blobID: blobID))
    }

    /// MD5 and CRC32C of the first `size` bytes of a file, read in bounded pieces on the pool.
    func checksums(ofFile path: String, size: Int64) async throws(StorageError) -> ObjectChecksums {
        let reader = try await pool.run { () throws(StorageError) -> ChecksumReader in
            guard let fd = try FileSystem.openForReading(path) else {
                if size == 0 { return ChecksumReader(path: path, descriptor: -1) }
                throw .internalError("staged file \(path) is missing")
            }
            return ChecksumReader(path: path, descriptor: fd)
        }
        while reader.offset < size {
            try await pool.run { () throws(StorageError) in try reader.step(upTo: size) }
        }
        return reader.finish()
    }
}

/// Incremental checksum of a file's bytes, one bounded read per `step` (pool-confined like `FileAppender`).
final class ChecksumReader: @unchecked Sendable {
    private let path: String
    private let descriptor: Int32
    private var checksum = BodyChecksum()
    private(set) var offset: Int64 = 0
    private static let stepBytes = 4 * 1024 * 1024
    private var buffer = [UInt8](repeating: 0, count: 1024 * 1024)

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { if descriptor >= 0 { FileSystem.close(descriptor) } }

    func step(upTo size: Int64) throws(StorageError) {
        var budget = Self.stepBytes
        while budget > 0 && offset < size {
            let want = Int(min(Int64(buffer.count), size - offset))
            let path = self.path, descriptor = self.descriptor, offset = self.offset
            let result = buffer.withUnsafeMutableBytes { (raw) -> Result<Int, StorageError> in
                do throws(StorageError) {
                    return .success(
                        try FileSystem.read(
                            descriptor, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]), at: offset,
                            path: path))
                } catch {
                    return .failure(error)
                }
            }
            let n = try result.get()
            guard n > 0 else { throw .internalError("staged file \(path) is shorter than its recorded size") }
            buffer.withUnsafeBytes { checksum.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            self.offset += Int64(n)
            budget -= n
        }
    }

    func finish() -> ObjectChecksums { checksum.finish() }
}
