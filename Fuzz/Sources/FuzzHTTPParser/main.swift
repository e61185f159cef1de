// libFuzzer entry point for `HTTPRequestParser`.
//
// Each input is parsed twice: in one piece, and cut into pieces whose sizes come from a PRNG seeded by the
// input. Invariants: no crash; every error status is one the server answers (400…505); body events are
// never empty; nothing follows an error; and both runs produce the same messages (heads, body bytes, ends,
// error status) — splitting must never change a verdict.
import HTTPServer

private struct Message: Equatable {
    var head: String
    var body: [UInt8] = []
    var ended = false
}

private struct Transcript: Equatable {
    var messages: [Message] = []
    var error: Int?
}

private let allowedStatuses: Set<Int> = [400, 413, 414, 431, 501, 505]

private func parse(_ data: UnsafeRawBufferPointer, pieces: [Int]) -> Transcript {
    var parser = HTTPRequestParser()
    var transcript = Transcript()
    var start = 0
    for size in pieces + [0] {
        let end = min(data.count, start + size)
        var offset = start
        while transcript.error == nil {
            let slice = UnsafeRawBufferPointer(rebasing: data[offset..<end])
            let (consumed, event) = parser.parse(slice)
            precondition(consumed >= 0 && consumed <= slice.count, "consumed out of range")
            offset += consumed
            guard let event else {
                precondition(offset == end, "no event but input left")
                break
            }
            switch event {
            case .head(let head):
                precondition(transcript.messages.last?.ended ?? true, "head inside a message")
                let fields = head.headers.map { "\($0.name):\($0.value)" }.joined(separator: "|")
                // The byte view and the String view of the head agree on every field name.
                for field in head.headers {
                    let bytes = head.headers.valueBytes(field.name).map { Array($0) }
                    precondition(
                        bytes.map { String(decoding: $0, as: UTF8.self) } == head.headers[field.name],
                        "byte and String views of a field differ")
                }
                transcript.messages.append(
                    Message(head: "\(head.method) \(head.target) \(head.versionMinor) \(head.framing) \(fields)"))
            case .body(let bytes):
                precondition(!bytes.isEmpty, "empty body event")
                precondition(transcript.messages.last.map { !$0.ended } ?? false, "body outside a message")
                transcript.messages[transcript.messages.count - 1].body += bytes
            case .end:
                precondition(transcript.messages.last.map { !$0.ended } ?? false, "end outside a message")
                transcript.messages[transcript.messages.count - 1].ended = true
            case .error(let error):
                precondition(allowedStatuses.contains(error.status), "unexpected status \(error.status)")
                precondition((400...505).contains(error.status))
                transcript.error = error.status
            }
        }
        start = end
        if transcript.error != nil || start >= data.count { break }
    }
    return transcript
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPParser(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = UnsafeRawBufferPointer(start: start, count: count)
    let whole = parse(data, pieces: [count])
    // Split sizes from a xorshift PRNG seeded by the input, biased towards tiny pieces.
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(count)
    for byte in data.prefix(16) { seed = (seed &* 31) &+ UInt64(byte) }
    var pieces: [Int] = []
    var total = 0
    while total < count {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
        let size = seed % 4 == 0 ? Int((seed >> 8) % 64) + 1 : Int((seed >> 8) % 4) + 1
        pieces.append(size)
        total += size
    }
    let split = parse(data, pieces: pieces)
    precondition(whole == split, "split parse differs: \(whole) vs \(split)")
    return 0
}
