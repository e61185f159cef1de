// libFuzzer entry point for `Gateway.MultipartReader` (streaming `multipart/related`, the multipart upload body).
//
// Input: the first line (up to LF) is the request's Content-Type, the rest is the body. Inputs whose
// Content-Type yields no boundary only exercise `MultipartReader.boundary(contentType:)`. The body is read
// twice: handed out whole, and in pieces whose sizes come from a PRNG seeded by the input (mostly 1–4 bytes,
// so delimiters straddle chunk edges), read back with PRNG-chosen `maxLength`s. An input bit picks the
// consumer: every part in turn, or the v0 upload handler's shape (JSON part through `collectPart`, media part
// through `partStream(lastPart: true)`).
//
// Invariants, checked on every chunk: it is non-empty and within `maxLength`; it is exactly the body bytes
// that end at `consumedBytes` (nothing invented, dropped or reordered, so media bytes never exceed the bytes
// fed); `consumedBytes` never decreases nor passes the bytes fed. Per part: its content never contains its
// delimiter, its header lines never contain CRLF. Per input: only `MultipartError`/`ByteStreamError` escape,
// a closed reader stays closed, and both runs give the same transcript — splitting never changes a verdict.
import Dispatch
import Gateway
import PortcullisCore

/// xorshift64, seeded from the input (never 0).
private struct Rng {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    /// Mostly 1–4, sometimes up to 64: tiny pieces are where split delimiters hide.
    mutating func pieceSize() -> Int {
        let r = next()
        return r % 4 == 0 ? Int((r >> 8) % 64) + 1 : Int((r >> 8) % 4) + 1
    }
}

/// The body as a `ByteStream` that hands out pieces of PRNG-chosen sizes (or the whole body when `rng` is nil).
private final class PieceStream: ByteStream, @unchecked Sendable {
    let bytes: [UInt8]
    private(set) var fed = 0
    private var rng: Rng?

    init(_ bytes: [UInt8], rng: Rng?) {
        self.bytes = bytes
        self.rng = rng
    }

    var expectedLength: Int64? { Int64(bytes.count) }
    func cancel() {}

    func next(maxLength: Int) async throws -> [UInt8]? {
        precondition(maxLength > 0, "reader asked for \(maxLength) bytes")
        guard fed < bytes.count else { return nil }
        let want = rng?.pieceSize() ?? bytes.count
        let end = fed + min(want, maxLength, bytes.count - fed)
        defer { fed = end }
        return Array(bytes[fed..<end])
    }
}

private struct Transcript: Equatable {
    var parts: [[String]] = []
    var contents: [[UInt8]] = []
    var outcome = ""
}

/// Reads one body to its end, checking the per-chunk and per-part invariants. `reads` picks the consumer's
/// `maxLength`s (nil: 64 KiB, as the upload handler reads).
private func read(
    _ stream: PieceStream, boundary: String, handlerShape: Bool, reads: Rng?
) async -> Transcript {
    var reads = reads
    let reader = MultipartReader(body: stream, boundary: boundary)
    // The reader's delimiter: `LF--boundary`, with the CR before it (RFC 2046's CRLF) belonging to it when the
    // part's own line breaks are CRLF — a writer whose line breaks are LF alone (gsutil, gcsfs) puts a bare LF
    // there too, and a CR before it is then the content's last byte.
    let delimiter = Array("\n--\(boundary)".utf8)
    let view: [UInt8] = [0x0D, 0x0A] + stream.bytes  // the reader pretends the first delimiter had a CRLF
    var transcript = Transcript()
    var consumed = reader.consumedBytes
    var media = 0

    func nextMaxLength() -> Int {
        guard reads != nil else { return 65_536 }
        return Int(reads!.next() % 97) + 1
    }

    /// One chunk: contiguous with the previous one, exactly the body bytes there, never past the bytes fed.
    func check(_ chunk: [UInt8], maxLength: Int) {
        precondition(!chunk.isEmpty, "empty chunk")
        precondition(chunk.count <= maxLength, "chunk of \(chunk.count) > maxLength \(maxLength)")
        let now = reader.consumedBytes
        precondition(now == consumed + Int64(chunk.count), "consumedBytes went from \(consumed) to \(now)")
        precondition(now <= Int64(stream.fed), "consumed \(now) of \(stream.fed) bytes fed")
        let end = Int(now) + 2
        precondition(view[(end - chunk.count)..<end].elementsEqual(chunk), "chunk is not the body at \(now)")
        consumed = now
        media += chunk.count
        precondition(media <= stream.fed, "\(media) media bytes from \(stream.fed) bytes fed")
    }

    /// A finished part: its content, then its delimiter (then `--` when `closed`), end where the reader is. With
    /// CRLF line breaks (`crlf`: the blank line ending the part's headers) the content is followed by the
    /// delimiter's CR when there is one, and never ends with a CR of its own; with LF ones it is followed by the
    /// delimiter itself, whatever its last byte.
    func checkEnd(_ content: [UInt8], closed: Bool, crlf: Bool) {
        let end = Int(reader.consumedBytes) + 2 - (closed ? 2 : 0)
        let delimiterStart = end - delimiter.count
        precondition(delimiterStart >= content.count && end <= view.count, "part outside the body")
        precondition(view[delimiterStart..<end].elementsEqual(delimiter), "part not ended by its delimiter")
        let bare = view[(delimiterStart - content.count)..<delimiterStart].elementsEqual(content)
        let afterCR =
            delimiterStart > content.count && view[delimiterStart - 1] == 0x0D
            && view[(delimiterStart - 1 - content.count)..<(delimiterStart - 1)].elementsEqual(content)
        precondition(crlf ? afterCR || (bare && content.last != 0x0D) : bare, "part is not the body")
        precondition(!contains(content, delimiter), "part content holds its delimiter")
        precondition(reader.consumedBytes <= Int64(stream.fed), "consumed more than fed")
    }

    do {
        var index = 0
        while index < 16, let headers = try await reader.nextPartHeaders() {
            precondition(reader.consumedBytes >= consumed && reader.consumedBytes <= Int64(stream.fed))
            consumed = reader.consumedBytes
            let crlf = view[Int(consumed)] == 0x0D  // the blank line's first byte, when it is CRLF
            let lines = headers.map { "\($0.name):\($0.value)" }
            for line in lines { precondition(!contains(Array(line.utf8), [0x0D, 0x0A]), "CRLF in a part header") }
            var content: [UInt8] = []
            if handlerShape, index == 0 {
                content = try await reader.collectPart(limit: 1024)
                precondition(content.count <= 1024, "collectPart passed its limit")
                checkEnd(content, closed: false, crlf: crlf)
            } else if handlerShape, index == 1 {
                let part = reader.partStream(lastPart: true)
                while true {
                    let max = nextMaxLength()
                    guard let chunk = try await part.next(maxLength: max) else { break }
                    check(chunk, maxLength: max)
                    content += chunk
                }
                checkEnd(content, closed: true, crlf: crlf)
                // A clean end of the last part means the closing delimiter came next.
                let after = try await reader.nextPartHeaders()
                precondition(after == nil, "a part after the last part")
            } else {
                while true {
                    let max = nextMaxLength()
                    guard let chunk = try await reader.readPartContent(maxLength: max) else { break }
                    check(chunk, maxLength: max)
                    content += chunk
                }
                checkEnd(content, closed: false, crlf: crlf)
            }
            transcript.parts.append(lines)
            transcript.contents.append(content)
            index += 1
        }
        if index < 16 {
            let headers = try await reader.nextPartHeaders()
            precondition(headers == nil, "closed reader opened a part")
            let content = try await reader.readPartContent(maxLength: 1)
            precondition(content == nil, "closed reader gave content")
            transcript.outcome = "closed"
        } else {
            transcript.outcome = "part limit"
        }
    } catch let error as MultipartError {
        transcript.outcome = "multipart: \(error)"
    } catch let error as ByteStreamError {
        transcript.outcome = "stream: \(error)"
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
    precondition(reader.consumedBytes <= Int64(stream.fed), "consumed more than fed")
    return transcript
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard haystack.count >= needle.count else { return false }
    var i = 0
    while i + needle.count <= haystack.count {
        if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
        i += 1
    }
    return false
}

/// Runs async work to completion from the fuzzer's synchronous callback. `Task.immediate` starts it on this
/// thread, and since `PieceStream` never suspends it usually finishes before `wait()`: no thread hop, which
/// keeps the target fast on a loaded machine. If it ever does suspend, the semaphore still waits for it.
private final class Box<T>: @unchecked Sendable { var value: T? }
private func runBlocking<T>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task.immediate {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipartReader(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: start, count: count))
    guard let newline = input.firstIndex(of: 0x0A) else { return 0 }
    let contentType = String(decoding: input[..<newline], as: UTF8.self)
    guard let boundary = MultipartReader.boundary(contentType: contentType) else { return 0 }
    precondition((1...70).contains(boundary.utf8.count), "boundary of \(boundary.utf8.count) bytes")
    precondition(!boundary.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "control character in the boundary")
    let body = Array(input[(newline + 1)...])

    var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(count)
    for byte in input { hash = (hash &* 0x100_0000_01B3) ^ UInt64(byte) }
    let seed = hash | 4  // never 0 (xorshift's fixed point)
    let handlerShape = hash & 1 == 1
    let whole = runBlocking {
        await read(PieceStream(body, rng: nil), boundary: boundary, handlerShape: handlerShape, reads: nil)
    }
    let split = runBlocking {
        await read(
            PieceStream(body, rng: Rng(state: seed | 2)), boundary: boundary, handlerShape: handlerShape,
            reads: Rng(state: seed))
    }
    precondition(whole == split, "split read differs:\n\(whole)\nvs\n\(split)")
    return 0
}
