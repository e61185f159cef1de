import Foundation
import PortcullisCore
import Testing

@testable import Storage

/// A body that yields `prefix` and then fails, like a client hanging up mid-upload.
final class FailingByteStream: ByteStream, @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: [UInt8]
    struct Failure: Error {}

    init(prefix: [UInt8]) { remaining = prefix }

    var expectedLength: Int64? { nil }

    func next(maxLength: Int) async throws -> [UInt8]? {
        let chunk: [UInt8] = lock.withLock {
            let count = min(maxLength, remaining.count)
            defer { remaining.removeFirst(count) }
            return Array(remaining.prefix(count))
        }
        if chunk.isEmpty { throw Failure() }
        return chunk
    }

    func cancel() {}
}

/// Deterministic pseudo-random bytes (xorshift), so large bodies need no fixtures.
func testBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed | 1
    var out = [UInt8]()
    out.reserveCapacity(count)
    for _ in 0..<count {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        out.append(UInt8(truncatingIfNeeded: state))
    }
    return out
}

/// Everything an `ObjectBody` holds, read into memory (test bodies are small).
func readAll(_ body: ObjectBody) async throws -> [UInt8] {
    switch body {
    case .stream(let stream):
        return try await stream.collect(limit: 64 << 20)
    case .bytes(let bytes):
        return bytes
    case .file(let region):
        var out = [UInt8](repeating: 0, count: Int(region.length))
        var done = 0
        while done < out.count {
            let n = out.withUnsafeMutableBytes { raw in
                pread(region.descriptor, raw.baseAddress! + done, raw.count - done, off_t(region.offset) + off_t(done))
            }
            if n <= 0 { throw POSIXError(.EIO) }
            done += n
        }
        return out
    }
}

extension Error {
    var isNotFound: Bool { if case .notFound? = self as? StorageError { true } else { false } }
    var isPreconditionFailed: Bool { if case .preconditionFailed? = self as? StorageError { true } else { false } }
}

/// A fresh directory under the system temp dir, removed when the value is deinitialised.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("portcullis-storage-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Base64 MD5 of `bytes` (the embedded implementation, itself checked against RFC 1321 vectors).
func md5Base64(_ bytes: [UInt8]) -> String {
    var checksum = BodyChecksum()
    checksum.update(bytes)
    return checksum.finish().md5Base64
}

/// The error as a `StorageError`, whatever static type the catch clause gave it.
func asStorageError(_ error: any Error) -> StorageError? { error as? StorageError }
