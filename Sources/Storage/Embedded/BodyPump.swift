import PortcullisCore

/// Pulls a request body to its end in bounded pieces and hands them to a blocking sink in batches.
///
/// Memory: at most one batch (`batchSize`) plus one chunk per body is held at a time. Every failure is a
/// `StorageError`: a producer error is `.bodyFailed`, a cancelled task `.bodyFailed(CancellationError())`,
/// and more bytes than `limit` allows is whatever `overflow` returns (the stream is cancelled then).
enum BodyPump {
    static let chunkSize = 256 * 1024
    static let batchSize = 1024 * 1024

    /// Returns the number of bytes pumped.
    static func pump(_ body: any ByteStream, limit: Int64?, overflow: (Int64) -> StorageError,
                     sink: ([UInt8]) async throws(StorageError) -> Void) async throws(StorageError) -> Int64 {
        var batch = [UInt8]()
        batch.reserveCapacity(batchSize)
        var total: Int64 = 0
        while true {
            if Task.isCancelled {
                body.cancel()
                throw .bodyFailed(CancellationError())
            }
            let chunk: [UInt8]?
            do {
                chunk = try await body.next(maxLength: chunkSize)
            } catch {
                throw .bodyFailed(error)
            }
            guard let chunk else { break }
            total += Int64(chunk.count)
            if let limit, total > limit {
                body.cancel()
                throw overflow(total)
            }
            batch.append(contentsOf: chunk)
            if batch.count >= batchSize {
                let full = batch
                batch = []
                batch.reserveCapacity(batchSize)
                try await sink(full)
            }
        }
        if !batch.isEmpty { try await sink(batch) }
        return total
    }
}
