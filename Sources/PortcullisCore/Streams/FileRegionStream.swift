import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `FileRegion` read as a `ByteStream`, for consumers that must see the bytes (decompressive transcoding,
/// server-side copies) rather than hand the region to `sendfile`.
///
/// Each `next` is one `pread` of at most `chunkBytes`, run on a shared concurrent Dispatch queue — blocking file
/// I/O never runs on Swift's cooperative pool. The region stays owned by the stream until it is released, so
/// the generation it names stays readable even if the object is overwritten meanwhile.
public final class FileRegionStream: ByteStream, @unchecked Sendable {
    // @unchecked: `offset` is touched only by the single consumer (ByteStream contract); `cancelled` is atomic.
    private let region: FileRegion
    private let chunkBytes: Int
    private var offset: Int64 = 0
    private let cancelled = Atomic<Bool>(false)

    static let readQueue = DispatchQueue(
        label: "portcullis.file-region-reads", qos: .userInitiated,
        attributes: .concurrent)

    public init(_ region: FileRegion, chunkBytes: Int = 64 * 1024) {
        self.region = region
        self.chunkBytes = max(1, chunkBytes)
    }

    public var expectedLength: Int64? { region.length }

    public func next(maxLength: Int) async throws -> [UInt8]? {
        guard !cancelled.load(ordering: .relaxed) else { throw ByteStreamError.cancelled }
        let remaining = region.length - offset
        guard remaining > 0 else { return nil }
        let count = Int(min(Int64(min(maxLength, chunkBytes)), remaining))
        let region = self.region
        let position = region.offset + offset
        let result: Result<[UInt8], ByteStreamError> = await withCheckedContinuation { continuation in
            Self.readQueue.async {
                var bytes = [UInt8](repeating: 0, count: count)
                let n = bytes.withUnsafeMutableBytes { buffer -> Int in
                    while true {
                        let n = pread(region.descriptor, buffer.baseAddress, count, off_t(position))
                        if n < 0 && errno == EINTR { continue }
                        return n
                    }
                }
                if n <= 0 {
                    continuation.resume(
                        returning: .failure(
                            .truncated(
                                expected: region.length,
                                received: position - region.offset)))
                } else {
                    continuation.resume(returning: .success(n == count ? bytes : Array(bytes[..<n])))
                }
            }
        }
        let bytes = try result.get()
        offset += Int64(bytes.count)
        return bytes
    }

    public func cancel() { cancelled.store(true, ordering: .relaxed) }
}
