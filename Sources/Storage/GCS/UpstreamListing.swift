import PortcullisCore

/// Builds `ListRequest` pages (one merged, byte-ordered, filtered stream of items and prefixes) over an
/// upstream that can only list flat names in byte order from a start point (GCS `startOffset`, S3
/// `start-after`). Shared by the GCS and S3 backends.
///
/// Our backend cursor is the last entry returned: `i:<name>` (resume after that item) or `p:<prefix>` (resume
/// after every name under that prefix). A folder's children are skipped by restarting the flat listing at the
/// prefix's successor (the trailing `/` replaced by `0`), so a prefix appears exactly once in the listing.
/// A page needs fetched names contiguous from `from`: a `Fetch` may return fewer than `limit` names, but never an
/// empty batch with `more` set.
///
/// Every comparison here is on UTF-8 bytes: `String.hasPrefix` and `==` compare grapheme clusters and
/// canonical equivalence, so a name like `"dir/\u{301}x"` would not "start with" `dir/` and end the listing,
/// and a cursor naming one spelling of a name would skip its canonically equivalent twin.
struct UpstreamListing {
    /// One flat fetch: names ≥ `from` (inclusive) under `prefix`, at most `limit`, and whether more follow.
    typealias Fetch = @Sendable (_ from: String, _ limit: Int) async throws(StorageError) -> (names: [String], more: Bool)

    static func page(_ request: ListRequest, fetch: Fetch) async throws(StorageError) -> ListPage {
        guard (1...1000).contains(request.maxResults) else { throw .invalidArgument("maxResults must be 1…1000") }
        let prefix = request.prefix
        var from = prefix
        var skipEqual: String?
        var lastPrefix: String?
        if let cursor = request.cursor {
            let value = String(decoding: cursor.utf8.dropFirst(2), as: UTF8.self)
            guard value.bytesHasPrefix(prefix), cursor.bytesHasPrefix("i:") || cursor.bytesHasPrefix("p:") else {
                throw .invalidArgument("list cursor does not belong to this listing")
            }
            if cursor.bytesHasPrefix("i:") {
                from = value
                skipEqual = value
            } else {
                guard let next = successor(value) else { return ListPage(items: [], prefixes: [], nextCursor: nil) }
                from = next
                lastPrefix = value
            }
        }
        var items = [String](), prefixes = [String]()
        var last: String?
        func full() -> Bool { items.count + prefixes.count >= request.maxResults }
        while true {
            let limit = min(1000, max(request.maxResults - items.count - prefixes.count + 1, 32))
            let (names, more) = try await fetch(from, limit)
            for name in names {
                guard name.bytesHasPrefix(prefix) else {
                    return ListPage(items: items, prefixes: prefixes, nextCursor: nil)
                }
                if let skipEqual, name.bytesEqual(skipEqual) { continue }
                let rest = Substring(name).utf8.dropFirst(prefix.utf8.count)
                if let delimiter = request.delimiter, let cut = findDelimiter(rest, Array(delimiter.utf8)) {
                    let segment = rest[..<cut]
                    if segment.isEmpty { continue } // `prefix//…`: the folder would have an empty segment
                    let folder = prefix + String(decoding: segment, as: UTF8.self) + delimiter
                    if let lastPrefix, folder.bytesEqual(lastPrefix) { continue }
                    if full() { return ListPage(items: items, prefixes: prefixes, nextCursor: last) }
                    prefixes.append(folder)
                    lastPrefix = folder
                    last = "p:" + folder
                } else {
                    guard isValidItem(rest) else { continue }
                    if full() { return ListPage(items: items, prefixes: prefixes, nextCursor: last) }
                    items.append(name)
                    last = "i:" + name
                }
            }
            guard more, let tail = names.last else { return ListPage(items: items, prefixes: prefixes, nextCursor: nil) }
            if let lastPrefix, tail.bytesHasPrefix(lastPrefix) {
                guard let next = successor(lastPrefix) else {
                    return ListPage(items: items, prefixes: prefixes, nextCursor: nil)
                }
                from = next
                skipEqual = nil
            } else {
                from = tail
                skipEqual = tail
            }
        }
    }

    /// Firebase hides names with an empty segment or a trailing `/` after the prefix.
    static func isValidItem(_ rest: Substring.UTF8View) -> Bool {
        guard let first = rest.first, let lastByte = rest.last else { return false }
        if first == 0x2F || lastByte == 0x2F { return false }
        var previous: UInt8 = 0
        for byte in rest {
            if byte == 0x2F && previous == 0x2F { return false }
            previous = byte
        }
        return true
    }

    private static func findDelimiter(_ rest: Substring.UTF8View, _ delimiter: [UInt8]) -> Substring.UTF8View.Index? {
        guard let first = delimiter.first else { return nil }
        var index = rest.startIndex
        while index != rest.endIndex {
            if rest[index] == first && rest[index...].starts(with: delimiter) { return index }
            index = rest.index(after: index)
        }
        return nil
    }

    /// The smallest string greater than every name starting with `prefix`: its last scalar incremented (byte
    /// order is scalar order in UTF-8), dropping trailing U+10FFFF; nil when nothing is greater.
    static func successor(_ prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                return String(String.UnicodeScalarView(scalars))
            }
        }
        return nil
    }

    /// A string below `name` in byte order with no name between them except ones continuing it with U+10FFFF
    /// (the last scalar decremented, then U+10FFFF): a `start-after` that still includes `name`. Callers must not
    /// rely on the gap being empty (see `S3Backend.fetchFlat`).
    static func predecessor(_ name: String) -> String {
        var scalars = Array(name.unicodeScalars)
        guard let last = scalars.popLast() else { return "" }
        if last.value > 0 {
            var previous = last.value - 1
            if (0xD800...0xDFFF).contains(previous) { previous = 0xD7FF }
            scalars.append(Unicode.Scalar(previous)!)
            scalars.append("\u{10FFFF}")
        }
        return String(String.UnicodeScalarView(scalars))
    }
}
