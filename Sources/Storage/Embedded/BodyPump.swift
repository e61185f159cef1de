import PortcullisCore

/// Received pieces of a body handed to a sink together, kept as the stream delivered them (no copy into one
/// buffer: a 1 MiB array per batch cost a copy of every byte plus fresh pages to fault in).
struct BodyBatch: Sendable {
    private(set) var pieces: [[UInt8]] = []
    /// Bytes in all pieces.
    private(set) var count = 0

    init() {}

    init(_ piece: [UInt8]) { append(piece) }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ piece: [UInt8]) {
        guard !piece.isEmpty else { return }
        pieces.append(piece)
        count += piece.count
    }
}

/// Pulls a request body to its end in bounded pieces and hands them to a blocking sink in batches.
///
/// Each pull asks for the rest of the batch at once (`nextPieces`): one hand-off with the producer per batch
/// when the sender is ahead, not one per piece. Memory: at most one batch (`batchSize`) plus one chunk per
/// body is held at a time. Every failure is a
/// `StorageError`: a producer error is `.bodyFailed`, a cancelled task `.bodyFailed(CancellationError())`,
/// and more bytes than `limit` allows is whatever `overflow` returns. The stream is cancelled whenever the
/// pump gives up before its end (overflow, sink failure, task cancellation).
enum BodyPump {
    static let chunkSize = 256 * 1024
    static let batchSize = 1024 * 1024

    /// Returns the number of bytes pumped.
    static func pump(
        _ body: any ByteStream, limit: Int64?, overflow: (Int64) -> StorageError,
        sink: (BodyBatch) async throws(StorageError) -> Void
    ) async throws(StorageError) -> Int64 {
        var batch = BodyBatch()
        var total: Int64 = 0
        while true {
            if Task.isCancelled {
                body.cancel()
                throw .bodyFailed(CancellationError())
            }
            let pieces: [[UInt8]]?
            do {
                pieces = try await body.nextPieces(maxLength: max(chunkSize, batchSize - batch.count))
            } catch {
                throw .bodyFailed(error)
            }
            guard let pieces else { break }
            for piece in pieces {
                total += Int64(piece.count)
                batch.append(piece)
            }
            if let limit, total > limit {
                body.cancel()
                throw overflow(total)
            }
            if batch.count >= batchSize {
                let full = batch
                batch = BodyBatch()
                try await deliver(full, to: sink, abandoning: body)
            }
        }
        if !batch.isEmpty { try await deliver(batch, to: sink, abandoning: body) }
        return total
    }

    /// A sink failure (disk full, staging ceiling) abandons the rest of the body: nobody will read it.
    private static func deliver(
        _ batch: BodyBatch, to sink: (BodyBatch) async throws(StorageError) -> Void,
        abandoning body: any ByteStream
    ) async throws(StorageError) {
        do throws(StorageError) {
            try await sink(batch)
        } catch {
            body.cancel()
            throw error
        }
    }
}
