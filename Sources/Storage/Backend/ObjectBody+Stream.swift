public import PortcullisCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension ObjectBody {
    /// The bytes as a pull stream, for consumers other than an HTTP response (a server-side copy or compose
    /// writing them into another object, a gunzip on the way out). A file region is read in 256 KiB pieces on
    /// a small blocking pool, never on the cooperative pool.
    public func byteStream() -> any ByteStream {
        switch self {
        case .stream(let stream): stream
        case .file(let region): FileRegionStream(region)
        case .bytes(let bytes): BufferByteStream(bytes)
        }
    }
}

/// A `FileRegion` as a `ByteStream` (`pread` from the region's offset; the region keeps its descriptor open).
final class FileRegionStream: ByteStream {
    private let region: FileRegion
    private let state = Mutex<(offset: Int64, cancelled: Bool)>((0, false))
    private static let pool = BlockingPool(label: "portcullis.region-read", laneCount: 2)
    private static let pieceBytes = 256 * 1024

    init(_ region: FileRegion) { self.region = region }

    var expectedLength: Int64? { region.length }

    func next(maxLength: Int) async throws -> [UInt8]? {
        let (done, cancelled) = state.withLock { ($0.offset, $0.cancelled) }
        if cancelled { throw ByteStreamError.cancelled }
        let remaining = region.length - done
        guard remaining > 0 else { return nil }
        let count = Int(min(Int64(min(maxLength, Self.pieceBytes)), remaining))
        let region = self.region
        let bytes = try await Self.pool.run { () throws(StorageError) -> [UInt8] in
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(region.descriptor, raw.baseAddress, count, off_t(region.offset + done))
            }
            guard n > 0 else { throw .internalError("blob read failed (errno \(errno))") }
            return n == count ? buffer : Array(buffer[..<n])
        }
        state.withLock { $0.offset += Int64(bytes.count) }
        return bytes
    }

    func cancel() { state.withLock { $0.cancelled = true } }
}
