// libFuzzer entry point for PortcullisCore's JSON parser (`JSONValue.parse`), which reads request bodies of the
// JSON API and the upstreams' answers, and for its pull reader (`JSONReader`), which reads a GCS object resource on
// every proxied metadata read. Both share one grammar; the fuzzer checks that they agree.
//
// Input: the document's bytes. Invariants:
// - parsing is deterministic, and a refusal's offset lies within the input;
// - an accepted document, encoded again, parses to the same value (integral numbers aside: a double with no
//   fraction is written as an integer, on purpose), and encoding that gives the same bytes (a fixed point);
// - on an object, reading every member (`readValue`) accepts what the parser accepts, except the parser's one
//   extra refusal (two names at the top level that are canonically equivalent but not the same bytes), and gives
//   the parser's members: the last of a repeated name, each name's bytes (`JSONKey.utf8`) those the parser kept;
// - reading past every member (`skipValue`) accepts whatever reading them accepts;
// - a string member read as bytes (`readStringBytes`) is the UTF-8 of the same member read as a `String`, and a
//   member that is not a string reads as nil both ways.
import PortcullisCore

private let normalizationRefusal = "member names differ only by Unicode normalization"

/// `value` with every double that the encoder writes as an integer turned into that integer.
private func normalized(_ value: JSONValue) -> JSONValue {
    switch value {
    case .double(let d) where d.rounded() == d && abs(d) < 1e15: .int(Int64(d))
    case .array(let items): .array(items.map(normalized))
    case .object(let members): .object(members.mapValues(normalized))
    default: value
    }
}

private func parsed(_ bytes: [UInt8]) -> Result<JSONValue, JSONParseError> {
    do { return .success(try JSONValue.parse(bytes)) } catch { return .failure(error) }
}

/// Every member of the top-level object with its value, in document order.
private func readMembers(_ bytes: [UInt8]) -> Result<[([UInt8], JSONValue)], JSONParseError> {
    var reader = JSONReader(bytes)
    var members: [([UInt8], JSONValue)] = []
    do {
        try reader.readObject { reader, key throws(JSONParseError) in
            members.append((Array(key.utf8), try reader.readValue()))
        }
        try reader.finish()
        return .success(members)
    } catch {
        return .failure(error)
    }
}

private func skipsMembers(_ bytes: [UInt8]) -> Bool {
    var reader = JSONReader(bytes)
    do {
        try reader.readObject { reader, _ throws(JSONParseError) in try reader.skipValue() }
        try reader.finish()
        return true
    } catch {
        return false
    }
}

/// Every member read as text twice over: as bytes, then (a second reader) as a `String`.
private func stringsAsBytesAndText(_ bytes: [UInt8]) -> ([[UInt8]?], [String?])? {
    var asBytes: [[UInt8]?] = []
    var asText: [String?] = []
    var first = JSONReader(bytes)
    var second = JSONReader(bytes)
    do {
        try first.readObject { reader, _ throws(JSONParseError) in
            asBytes.append(try reader.readStringBytes().map { Array($0) })
        }
        try first.finish()
        try second.readObject { reader, _ throws(JSONParseError) in asText.append(try reader.readString()) }
        try second.finish()
        return (asBytes, asText)
    } catch {
        return nil
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    let outcome = parsed(bytes)
    switch (outcome, parsed(bytes)) {
    case (.success(let a), .success(let b)): precondition(a == b, "two parses, two values")
    case (.failure(let a), .failure(let b)): precondition(a == b, "two parses, two refusals: \(a) / \(b)")
    default: preconditionFailure("one parse accepted, the other refused")
    }
    switch outcome {
    case .failure(let error):
        precondition(error.offset >= 0 && error.offset <= bytes.count, "offset \(error.offset) outside the input")
    case .success(let value):
        var encoded: [UInt8] = []
        value.encode(into: &encoded)
        guard case .success(let again) = parsed(encoded) else {
            preconditionFailure("encoded, refused: \(String(decoding: encoded, as: UTF8.self))")
        }
        precondition(again == normalized(value), "encoded, parsed differently: \(value) / \(again)")
        var encodedAgain: [UInt8] = []
        again.encode(into: &encodedAgain)
        precondition(encodedAgain == encoded, "encoded twice, two texts")
    }

    // The reader reads objects only: compare where the document is one.
    guard let firstByte = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), firstByte == UInt8(ascii: "{")
    else { return 0 }
    let members = readMembers(bytes)
    switch (outcome, members) {
    case (.success(let value), .success(let read)):
        guard case .object(let object) = value else { preconditionFailure("an object parsed as \(value)") }
        var lastOfEach: [String: JSONValue] = [:]
        for (name, member) in read { lastOfEach[String(decoding: name, as: UTF8.self)] = member }
        precondition(lastOfEach == object, "read \(lastOfEach), parsed \(object)")
        for (name, _) in read {
            let kept = String(decoding: name, as: UTF8.self)
            // identity-ok: finds the parser's own spelling of the name, then compares bytes
            guard let index = object.index(forKey: kept) else {
                preconditionFailure("\(kept.debugDescription) read, not parsed")
            }
            precondition(object[index].key.utf8.elementsEqual(name), "a name read as other bytes than parsed")
        }
    case (.failure(let error), .success):
        precondition(error.reason == normalizationRefusal, "the reader accepted what the parser refused: \(error)")
    case (.success, .failure(let error)):
        preconditionFailure("the reader refused what the parser accepted: \(error)")
    case (.failure, .failure):
        break
    }
    if case .success = members {
        precondition(skipsMembers(bytes), "reading past the members refused what reading them accepted")
        guard let (asBytes, asText) = stringsAsBytesAndText(bytes) else {
            preconditionFailure("reading the members as strings refused what reading them accepted")
        }
        precondition(asBytes.count == asText.count, "two readings, two member counts")
        for (b, t) in zip(asBytes, asText) {
            precondition(
                b == t.map { Array($0.utf8) }, "a string read as \(String(describing: b)) and \(String(describing: t))")
        }
    }
    return 0
}
