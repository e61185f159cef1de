import ChildProcessIO
import Foundation
import PortcullisCore
import Testing

@testable import Gzip

/// `GunzipStream` against gzip data made by other implementations (the `gzip` CLI, Python's `gzip`/`zlib`):
/// round trips, multi-member files, every truncation of a member, corruption, and a high-ratio stream read in
/// bounded pieces.
@Suite struct GunzipStreamTests {
    @Test(arguments: [1, 7, 4096, 65536])
    func roundTripsGzipCLIOutputWhateverTheSourceChunking(chunk: Int) async throws {
        let original = sampleData(count: 1 << 20)
        let compressed = try await GzipFixtures.gzipCLI(original)
        let source = ChunkedStream(compressed, chunk: chunk)
        let result = try await readAll(GunzipStream(source), maxLength: 10_000)
        #expect(result == original)
        #expect(source.cancelled == false)
    }

    @Test func smallReadsAndTheDefaultBufferBoundEachChunk() async throws {
        let original = sampleData(count: 300_000)
        let compressed = try await GzipFixtures.gzipCLI(original)
        let stream = GunzipStream(ChunkedStream(compressed, chunk: 65536), bufferBytes: 4096)
        var result: [UInt8] = []
        while let piece = try await stream.next(maxLength: 1_000_000) {
            #expect(!piece.isEmpty && piece.count <= 4096)
            result += piece
        }
        #expect(result == original)
        let tiny = GunzipStream(ChunkedStream(compressed, chunk: 65536))
        let first = try #require(try await tiny.next(maxLength: 3))
        #expect(first == Array(original[0..<3]))
    }

    @Test func multiMemberFilesDecompressToTheConcatenation() async throws {
        let parts = [Array("first member\n".utf8), [], sampleData(count: 100_000), Array("last".utf8)]
        let compressed = try await GzipFixtures.python(
            """
            import gzip, sys
            parts = [b"first member\\n", b"", bytes(sys.stdin.buffer.read()), b"last"]
            sys.stdout.buffer.write(b"".join(gzip.compress(p, mtime=0) for p in parts))
            """, input: parts[2])
        #expect(try await readAll(GunzipStream(ChunkedStream(compressed, chunk: 1000))) == parts.flatMap { $0 })
    }

    @Test func anEmptySourceIsAnEmptyResult() async throws {
        #expect(try await readAll(GunzipStream(ChunkedStream([], chunk: 1))) == [])
    }

    @Test func everyTruncationOfAMemberIsATypedError() async throws {
        let compressed = try await GzipFixtures.gzipCLI(Array("hello, truncated world — hello again".utf8))
        for length in 1..<compressed.count {
            let stream = GunzipStream(ChunkedStream(Array(compressed[0..<length]), chunk: 5))
            await #expect(throws: GunzipError.truncated, "prefix of \(length) bytes") {
                _ = try await readAll(stream)
            }
        }
        // A whole first member followed by a cut second one is truncated too.
        let cut = compressed + compressed.prefix(12)
        await #expect(throws: GunzipError.truncated) {
            _ = try await readAll(GunzipStream(ChunkedStream(cut, chunk: 64)))
        }
    }

    @Test func corruptDataEndsWithCorrupt() async throws {
        let original = sampleData(count: 50_000)
        let compressed = try await GzipFixtures.gzipCLI(original)
        var cases: [(String, [UInt8])] = [
            ("not gzip", Array("hello world, plainly".utf8)),
            (
                "zlib wrapper",
                try await GzipFixtures.python("import zlib, sys; sys.stdout.buffer.write(zlib.compress(b'abc'))")
            ),
            ("trailing garbage", compressed + Array("garbage".utf8)),
            (
                "bad method",
                {
                    var c = compressed; c[2] = 7; return c
                }()
            ),
        ]
        var badCRC = compressed
        badCRC[badCRC.count - 8] ^= 0xFF
        cases.append(("CRC-32 mismatch", badCRC))
        var badLength = compressed
        badLength[badLength.count - 1] ^= 0x01
        cases.append(("ISIZE mismatch", badLength))
        var flipped = compressed
        for index in stride(from: 20, to: flipped.count - 8, by: 97) { flipped[index] ^= 0x5A }
        cases.append(("damaged deflate data", flipped))
        for (name, bytes) in cases {
            do {
                _ = try await readAll(GunzipStream(ChunkedStream(bytes, chunk: 4096)))
                Issue.record("\(name): decompressed without an error")
            } catch let error as GunzipError {
                guard case .corrupt(let why) = error else { Issue.record("\(name): \(error)"); continue }
                #expect(!why.isEmpty)
            } catch {
                Issue.record("\(name): unexpected \(error)")
            }
        }
    }

    @Test func aHighRatioStreamExpandsOnlyAsFastAsItIsRead() async throws {
        // 128 MiB of zeros in about an eighth of a megabyte (ratio ~1000:1).
        let expanded = 128 << 20
        let compressed = try await GzipFixtures.python(
            """
            import zlib, sys
            c = zlib.compressobj(6, zlib.DEFLATED, 31)
            block = bytes(1 << 20)
            out = sys.stdout.buffer
            for _ in range(\(expanded >> 20)):
                out.write(c.compress(block))
            out.write(c.flush())
            """)
        #expect(compressed.count < expanded / 500)
        let source = ChunkedStream(compressed, chunk: 64 * 1024)
        let stream = GunzipStream(source)
        var total = 0
        var largest = 0
        var sourceReadsAtFirstChunk = 0
        var pieces = 0
        while let piece = try await stream.next(maxLength: 1 << 30) {
            if total == 0 { sourceReadsAtFirstChunk = source.reads }
            total += piece.count
            largest = max(largest, piece.count)
            if pieces % 256 == 0 { #expect(piece == [UInt8](repeating: 0, count: piece.count)) }
            pieces += 1
        }
        #expect(total == expanded)
        // Never more than one output buffer at a time, and the source is read on demand, not up front.
        #expect(largest <= GunzipStream.defaultBufferBytes)
        #expect(sourceReadsAtFirstChunk == 1)
        #expect(stream.bufferBytes == GunzipStream.defaultBufferBytes)
    }

    @Test func cancellingStopsTheStreamAndItsSource() async throws {
        let compressed = try await GzipFixtures.gzipCLI(sampleData(count: 1 << 20))
        let source = ChunkedStream(compressed, chunk: 4096)
        let stream = GunzipStream(source)
        _ = try await stream.next(maxLength: 1024)
        stream.cancel()
        #expect(source.cancelled)
        await #expect(throws: ByteStreamError.cancelled) { _ = try await stream.next(maxLength: 1024) }
    }

    @Test func sourceErrorsPassThrough() async throws {
        let compressed = try await GzipFixtures.gzipCLI(sampleData(count: 100_000))
        let source = ChunkedStream(compressed, chunk: 1000, failAfter: 3)
        await #expect(throws: ByteStreamError.truncated(expected: 1, received: 0)) {
            _ = try await readAll(GunzipStream(source))
        }
    }
}

// MARK: - Support

/// Reads a stream to its end.
func readAll(_ stream: any ByteStream, maxLength: Int = 65536) async throws -> [UInt8] {
    var result: [UInt8] = []
    while let piece = try await stream.next(maxLength: maxLength) {
        #expect(!piece.isEmpty && piece.count <= maxLength)
        result += piece
    }
    return result
}

/// Compressible but not trivial bytes: text-like runs mixed with a pseudo-random tail.
func sampleData(count: Int) -> [UInt8] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    return (0..<count).map { index in
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return index % 3 == 0 ? UInt8(truncatingIfNeeded: state) : UInt8(0x61 + index % 26)
    }
}

/// A source stream over bytes, delivered `chunk` bytes at a time; counts reads and may fail part-way.
final class ChunkedStream: ByteStream, @unchecked Sendable {
    private let lock = NSLock()
    private let bytes: [UInt8]
    private let chunk: Int
    private let failAfter: Int?
    private var offset = 0
    private(set) var reads = 0
    private var wasCancelled = false

    init(_ bytes: [UInt8], chunk: Int, failAfter: Int? = nil) {
        self.bytes = bytes
        self.chunk = chunk
        self.failAfter = failAfter
    }

    var expectedLength: Int64? { Int64(bytes.count) }
    var cancelled: Bool { lock.withLock { wasCancelled } }

    func next(maxLength: Int) async throws -> [UInt8]? {
        try lock.withLock {
            guard !wasCancelled else { throw ByteStreamError.cancelled }
            if let failAfter, reads >= failAfter { throw ByteStreamError.truncated(expected: 1, received: 0) }
            guard offset < bytes.count else { return nil }
            reads += 1
            let end = min(bytes.count, offset + min(chunk, maxLength))
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }

    func cancel() { lock.withLock { wasCancelled = true } }
}

/// gzip data made by other implementations. The tools run off Swift's cooperative pool (a test blocked in
/// `waitUntilExit` there would stall every other test's continuations on a two-core machine).
enum GzipFixtures {
    struct ToolFailed: Error { let status: Int32 }

    /// `gzip -c -n` (GNU gzip) of `data`.
    static func gzipCLI(_ data: [UInt8]) async throws -> [UInt8] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gunzip-\(UUID().uuidString)")
        try Data(data).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await run(["gzip", "-c", "-n", "-6", file.path], input: nil)
    }

    /// The standard output of a Python 3 script (given `input` on standard input).
    static func python(_ script: String, input: [UInt8]? = nil) async throws -> [UInt8] {
        try await run(["python3", "-c", script], input: input)
    }

    private static func run(_ arguments: [String], input: [UInt8]?) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(arguments, input: input) })
            }
        }
    }

    private static func runBlocking(_ arguments: [String], input: [UInt8]?) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        var inputFile: URL?
        if let input {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("gunzip-in-\(UUID().uuidString)")
            try Data(input).write(to: file)
            process.standardInput = try FileHandle(forReadingFrom: file)
            inputFile = file
        }
        defer { if let inputFile { try? FileManager.default.removeItem(at: inputFile) } }
        try process.run()
        let output = stdout.fileHandleForReading.readToEndRetryingInterrupts()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ToolFailed(status: process.terminationStatus) }
        return Array(output)
    }
}
