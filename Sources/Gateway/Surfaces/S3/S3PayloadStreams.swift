import Crypto
import PortcullisCore
import Service
import Synchronization

/// Where a body check records why it failed, so the surface answers with S3's code for it (`BadDigest`,
/// `XAmzContentSHA256Mismatch`, `SignatureDoesNotMatch`) whatever the service made of the thrown error.
final class S3BodyVerdict: Sendable {
    private let failure = Mutex<S3Error?>(nil)
    var recorded: S3Error? { failure.withLock { $0 } }
    func record(_ error: S3Error) -> ServiceError {
        failure.withLock { if $0 == nil { $0 = error } }
        return ServiceError.badRequest(error.message)
    }
}

/// A body whose digests the request declared — the SHA-256 the signature covers (`x-amz-content-sha256: <hex>`),
/// `Content-MD5`, `x-amz-checksum-crc32c` — checked as the bytes pass through: a mismatch fails the stream
/// before its clean end, so the upload commits nothing, and the surface answers with S3's code for it.
final class DigestCheckedStream: ByteStream, @unchecked Sendable {
    // @unchecked: one consumer, never concurrent with itself (the ByteStream contract); `cancel` forwards.
    private let base: any ByteStream
    private let verdict: S3BodyVerdict
    private let sha256: [UInt8]?
    private let md5: [UInt8]?
    private let crc32c: UInt32?
    private var sha256Hasher = SHA256()
    private var md5Hasher = MD5()
    private var crcHasher = CRC32C()

    /// `sha256` as the hex of the digest; `md5` as its 16 bytes; `crc32c` as the value.
    init(_ base: any ByteStream, sha256: String?, md5: [UInt8]?, crc32c: UInt32?, verdict: S3BodyVerdict) {
        self.base = base
        self.sha256 = sha256.map { Array($0.lowercased().utf8) }
        self.md5 = md5
        self.crc32c = crc32c
        self.verdict = verdict
    }

    var expectedLength: Int64? { base.expectedLength }

    func next(maxLength: Int) async throws -> [UInt8]? {
        guard let chunk = try await base.next(maxLength: maxLength) else {
            try check()
            return nil
        }
        if sha256 != nil { sha256Hasher.update(chunk) }
        if md5 != nil { md5Hasher.update(chunk) }
        if crc32c != nil { crcHasher.update(chunk) }
        return chunk
    }

    private func check() throws {
        if let sha256, !ConstantTime.equals(Array(HexText.encode(sha256Hasher.finalize()).utf8), sha256) {
            throw verdict.record(
                S3Error(
                    400, "XAmzContentSHA256Mismatch",
                    "The provided 'x-amz-content-sha256' header does not match what was computed."))
        }
        if let md5, !ConstantTime.equals(md5Hasher.finalize(), md5) {
            throw verdict.record(
                S3Error(400, "BadDigest", "The Content-MD5 you specified did not match what we received."))
        }
        if let crc32c, crcHasher.finalize() != crc32c {
            throw verdict.record(
                S3Error(400, "BadDigest", "The CRC32C you specified did not match the calculated checksum."))
        }
    }

    func cancel() { base.cancel() }
}

/// An `aws-chunked` body (`Content-Encoding: aws-chunked`): `HEX;chunk-signature=SIG\r\n<bytes>\r\n` … ending
/// with a zero-length chunk (and, for the trailer forms, trailing headers and an empty line).
///
/// With `STREAMING-AWS4-HMAC-SHA256-PAYLOAD` each chunk's signature chains from the previous one (the seed is
/// the request's) and is checked when the chunk ends; the chunk's bytes are handed on as they arrive, so memory
/// stays bounded whatever the chunk size, and a bad signature fails the stream before its clean end — the
/// upload then commits nothing. `STREAMING-UNSIGNED-PAYLOAD-TRAILER` chunks carry no signatures.
final class AWSChunkedStream: ByteStream, @unchecked Sendable {
    // @unchecked: one consumer, never concurrent with itself (the ByteStream contract); `cancel` forwards.
    struct Signing {
        var key: [UInt8]
        var amzDate: String
        var scope: String
        var seed: String
    }

    private let base: any ByteStream
    private let signing: Signing?
    private let verdict: S3BodyVerdict
    let decodedLength: Int64?
    private var buffer: [UInt8] = []
    private var offset = 0
    private var ended = false
    private var remaining = 0
    private var chunkSignature: String?
    private var previous: String
    private var hasher = SHA256()
    private var finished = false
    private var produced: Int64 = 0
    static let maxLineBytes = 4096
    static let emptyHash = HexText.encode(SHA256.hash([UInt8]()))

    init(_ base: any ByteStream, signing: Signing?, decodedLength: Int64?, verdict: S3BodyVerdict) {
        self.base = base
        self.signing = signing
        self.decodedLength = decodedLength
        self.verdict = verdict
        previous = signing?.seed ?? ""
    }

    var expectedLength: Int64? { decodedLength }

    func next(maxLength: Int) async throws -> [UInt8]? {
        while true {
            if finished { return nil }
            if remaining > 0 {
                if offset == buffer.count { try await fill() }
                let take = min(remaining, buffer.count - offset, maxLength)
                let piece = Array(buffer[offset..<offset + take])
                offset += take
                remaining -= take
                hasher.update(piece)
                produced += Int64(piece.count)
                if remaining == 0 { try await endChunk() }
                return piece
            }
            try await startChunk()
        }
    }

    /// Reads `HEX[;chunk-signature=SIG]\r\n`; a zero size ends the body (after its signature and any trailers).
    private func startChunk() async throws {
        let line = try await readLine()
        let parts = line.split(separator: UInt8(ascii: ";"), maxSplits: 1)
        guard let sizeText = parts.first, let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16),
            size >= 0
        else { throw verdict.record(S3Error(400, "IncompleteBody", "Malformed aws-chunked chunk header.")) }
        chunkSignature = nil
        if parts.count == 2 {
            chunkSignature = String(decoding: parts[1], as: UTF8.self).bytesRemovingPrefix("chunk-signature=")
        }
        hasher = SHA256()
        if size == 0 {
            try check()
            // Trailing headers (checksums of the trailer forms) up to the empty line.
            while !(try await readLine()).isEmpty {}
            if let decodedLength, produced != decodedLength {
                throw verdict.record(
                    S3Error(400, "IncompleteBody", "The body's length differs from x-amz-decoded-content-length."))
            }
            finished = true
            return
        }
        remaining = size
    }

    /// After a chunk's bytes: its signature, then the CRLF that closes it.
    private func endChunk() async throws {
        try check()
        let rest = try await readLine()
        guard rest.isEmpty else {
            throw verdict.record(S3Error(400, "IncompleteBody", "An aws-chunked chunk is longer than it declared."))
        }
    }

    private func check() throws {
        guard let signing else { return }
        guard let claimed = chunkSignature else {
            throw verdict.record(S3Error(403, "SignatureDoesNotMatch", "An aws-chunked chunk has no signature."))
        }
        let stringToSign = [
            "AWS4-HMAC-SHA256-PAYLOAD", signing.amzDate, signing.scope, previous, Self.emptyHash,
            HexText.encode(hasher.finalize()),
        ].joined(separator: "\n")
        let expected = S3SigV4.signature(signingKey: signing.key, stringToSign: stringToSign)
        guard ConstantTime.equals(Array(expected.utf8), Array(claimed.utf8)) else {
            throw verdict.record(
                S3Error(
                    403, "SignatureDoesNotMatch",
                    "The request signature we calculated does not match the signature you provided."))
        }
        previous = expected
    }

    /// One CRLF-terminated line (without the CRLF), at most `maxLineBytes`.
    private func readLine() async throws -> [UInt8] {
        var line: [UInt8] = []
        while true {
            if offset == buffer.count { try await fill() }
            let byte = buffer[offset]
            offset += 1
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return line
            }
            line.append(byte)
            guard line.count <= Self.maxLineBytes else {
                throw verdict.record(S3Error(400, "IncompleteBody", "An aws-chunked line is too long."))
            }
        }
    }

    private func fill() async throws {
        guard let chunk = try await base.next(maxLength: 65_536) else {
            throw verdict.record(S3Error(400, "IncompleteBody", "The aws-chunked body ended early."))
        }
        buffer = chunk
        offset = 0
    }

    func cancel() { base.cancel() }
}
