// libFuzzer entry point for the S3 backend's XML reader (`XMLReader`, `XMLScanner`): the Storage files compiled
// into this target through symlinks (they import nothing, and Storage is not a library product).
//
// Input: the document's bytes. The reader runs with small limits (2 KiB, depth 8) so both refusals are reached.
// Invariants:
// - parsing is deterministic (the same tree, or the same refusal at the same offset);
// - a refusal's offset lies within the input; `tooLarge` only for inputs over the limit, never otherwise;
// - an accepted tree respects the depth limit, every name is non-empty and holds no markup byte, and every text
//   holds only XML 1.0 characters;
// - the tree written back as XML (text escaped, one element per element) reads back to the same tree: the reader
//   loses nothing it reports and invents nothing;
// - an accepted document followed by `<` is refused (nothing may follow the root but comments, PIs and space).
import PortcullisCore  // the reader's files use its byte comparisons

private let limits = XMLReader.Limits(maxBytes: 2048, maxDepth: 8)

private func outcome(_ bytes: [UInt8]) -> Result<XMLReader.Element, XMLReaderError> {
    do { return .success(try XMLReader.parse(bytes, limits: limits)) } catch { return .failure(error) }
}

/// The element as XML: its text first (escaped), then its children — the reader gathers an element's direct
/// text in document order whatever the children between, so this order reads back to the same tree.
private func write(_ element: XMLReader.Element, into out: inout [UInt8]) {
    out.append(UInt8(ascii: "<"))
    out.append(contentsOf: element.name.utf8)
    out.append(UInt8(ascii: ">"))
    for byte in element.text.utf8 {
        switch byte {
        case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
        case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
        case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
        // A CR written raw would be normalized away: only a reference keeps it.
        case 0x0D: out.append(contentsOf: "&#13;".utf8)
        default: out.append(byte)
        }
    }
    for child in element.children { write(child, into: &out) }
    out.append(contentsOf: "</".utf8)
    out.append(contentsOf: element.name.utf8)
    out.append(UInt8(ascii: ">"))
}

private func check(_ element: XMLReader.Element, depth: Int) {
    precondition(depth <= limits.maxDepth, "depth \(depth) over the limit")
    precondition(!element.name.isEmpty, "an empty element name")
    precondition(
        !element.name.utf8.contains(where: { "<>&/=\"' \t\r\n".utf8.contains($0) }),
        "markup in the name \(element.name.debugDescription)")
    precondition(
        element.text.unicodeScalars.allSatisfy { XMLReader.isXMLCharacter($0.value) },
        "a character XML forbids in \(element.text.debugDescription)")
    for child in element.children { check(child, depth: depth + 1) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXMLReader(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    let first = outcome(bytes)
    switch (first, outcome(bytes)) {
    case (.success(let a), .success(let b)): precondition(a == b, "two reads, two trees")
    case (.failure(let a), .failure(let b)): precondition(a == b, "two reads, two refusals: \(a) / \(b)")
    default: preconditionFailure("one read accepted, the other refused")
    }
    switch first {
    case .failure(let error):
        precondition(error.offset >= 0 && error.offset <= bytes.count, "offset \(error.offset) outside the input")
        if case .tooLarge = error.kind {
            precondition(bytes.count > limits.maxBytes, "tooLarge for \(bytes.count) bytes")
        } else {
            precondition(bytes.count <= limits.maxBytes, "an input over the limit was read: \(error)")
        }
    case .success(let root):
        check(root, depth: 1)
        var written: [UInt8] = []
        write(root, into: &written)
        do {
            let again = try XMLReader.parse(written, limits: XMLReader.Limits(maxBytes: 1 << 20, maxDepth: 64))
            precondition(again == root, "written back, read differently:\n\(root)\n\(again)")
        } catch {
            preconditionFailure("written back, refused: \(error) for \(String(decoding: written, as: UTF8.self))")
        }
        if bytes.count < limits.maxBytes {
            guard case .failure = outcome(bytes + [UInt8(ascii: "<")]) else {
                preconditionFailure("a document followed by < was accepted")
            }
        }
    }
    return 0
}
