import PortcullisCore

/// Where a listing resumes: strictly after an item, or after every name under an emitted prefix.
///
/// Encoded as `i:<name>` / `p:<prefix>`; the service seals it (binding the listing's shape), so a backend only
/// checks that it is well formed and lies under the request prefix.
enum ListCursor: Equatable {
    case afterItem([UInt8])
    case afterPrefix([UInt8])

    var encoded: String {
        switch self {
        case .afterItem(let name): "i:" + String(decoding: name, as: UTF8.self)
        case .afterPrefix(let prefix): "p:" + String(decoding: prefix, as: UTF8.self)
        }
    }

    init(decoding text: String) throws(StorageError) {
        let bytes = Array(text.utf8)
        guard bytes.count > 2, bytes[1] == UInt8(ascii: ":") else { throw .invalidArgument("Invalid page token.") }
        let key = Array(bytes[2...])
        switch bytes[0] {
        case UInt8(ascii: "i"): self = .afterItem(key)
        case UInt8(ascii: "p"): self = .afterPrefix(key)
        default: throw .invalidArgument("Invalid page token.")
        }
    }

    /// The first key the next page may start at (nil: nothing can follow).
    var resumeKey: [UInt8]? {
        switch self {
        case .afterItem(let name): name + [0]
        case .afterPrefix(let prefix): ListPageBuilder.successor(of: prefix)
        }
    }

    var key: [UInt8] {
        switch self {
        case .afterItem(let key), .afterPrefix(let key): key
        }
    }
}

/// The listing semantics of `ListRequest`, applied to names fed one at a time in byte order — the one
/// implementation every backend's scanner drives (the embedded index walk, the upstream flat listings).
///
/// The scanner feeds each name it meets and does what the answer says: go on, seek past a listed prefix
/// (its other names can add nothing), or stop (page full, or past the listing's end). Names are bytes
/// throughout; nothing here compares `String`s.
///
/// Each name costs time linear in its length: the prefix compare, the delimiter search (Knuth–Morris–Pratt, so
/// a long delimiter cannot make it quadratic) and the glob's automaton. The glob's work is counted
/// (`globWork`, in word operations) so a scanner can end a page once it passes `globWorkBudget`.
struct ListPageBuilder {
    /// Most glob work (word operations, `NameGlob.matchCost`) one page spends before its scanner cuts it short:
    /// about 0.2 s of one core here for the costliest pattern the limits allow (17 words, 6 passes: ~0.1 ms per
    /// 1,000-byte name, so ~2,000 such names a page), while an ordinary glob (`**/*.jpg`, one word) on 100,000
    /// names of 100 bytes spends ~20 million and never reaches it.
    static let globWorkBudget = 200_000_000

    let prefix: [UInt8]
    let delimiter: [UInt8]?
    /// The delimiter's failure function (longest proper border of each prefix), for `firstRange`.
    private let delimiterBorders: [Int]
    let maxResults: Int
    let glob: NameGlob?
    let firebaseView: Bool
    let includeTrailingDelimiter: Bool
    /// The first name that may be listed: the prefix, the start offset, or the cursor's resume point.
    let startKey: [UInt8]
    /// The end of the listing (exclusive): the prefix's successor or the end offset; nil = the end of the bucket.
    let endKey: [UInt8]?
    /// Nothing can be listed (an invalid Firebase prefix, an empty offset range, a cursor at the very end).
    let isEmpty: Bool

    private(set) var items: [String] = []
    private(set) var prefixes: [String] = []
    private var emitted = 0
    /// The last entry listed: where the next page resumes when this one fills.
    private var lastEmitted: ListCursor?
    /// Where the scan stands after the last name fed (for a page cut short by a scan budget).
    private(set) var position: ListCursor?
    /// Word operations the glob has spent on the names fed so far.
    private(set) var globWork = 0

    enum Step: Equatable {
        /// Feed the next name.
        case next
        /// Skip to the first name ≥ this key (the names between can add nothing).
        case seek([UInt8])
        /// The page is complete: `page(more: true)`.
        case full
        /// No further name can be listed: `page(more: false)`.
        case done
    }

    init(_ request: ListRequest) throws(StorageError) {
        prefix = Array(request.prefix.utf8)
        delimiter = request.delimiter.map { Array($0.utf8) }
        delimiterBorders = Self.borders(of: delimiter ?? [])
        maxResults = request.maxResults
        glob = request.matchGlob
        firebaseView = request.firebaseView
        includeTrailingDelimiter = request.includeTrailingDelimiter
        var start = prefix
        var empty = maxResults <= 0
        if firebaseView, !prefix.isEmpty {
            let path = prefix.last == UInt8(ascii: "/") ? prefix.dropLast() : prefix[...]
            if !Self.isValidPath(path) { empty = true }
        }
        if let offset = request.startOffset.map({ Array($0.utf8) }), Self.less(start, offset) { start = offset }
        if let text = request.cursor {
            let cursor = try ListCursor(decoding: text)
            guard cursor.key.starts(with: prefix) else { throw .invalidArgument("Invalid page token.") }
            if let resume = cursor.resumeKey {
                if Self.less(start, resume) { start = resume }
            } else {
                empty = true
            }
        }
        var end = Self.successor(of: prefix)
        if let offset = request.endOffset.map({ Array($0.utf8) }), end.map({ Self.less(offset, $0) }) ?? true {
            end = offset
        }
        if let end, !Self.less(start, end) { empty = true }
        startKey = start
        endKey = end
        isEmpty = empty
    }

    /// Takes the next name of the scan (names arrive in byte order, each ≥ `startKey`).
    mutating func feed(_ name: [UInt8]) -> Step {
        if let endKey, !Self.less(name, endKey) { return .done }
        guard name.starts(with: prefix) else { return .done }
        let rest = name[prefix.count...]
        if let delimiter, let cut = Self.firstRange(of: delimiter, borders: delimiterBorders, in: rest) {
            let folder = Array(name[..<cut.upperBound])
            let skip = Self.successor(of: folder)
            if firebaseView, !Self.isValidPath(rest[..<cut.lowerBound]) {
                position = .afterPrefix(folder)
                return skip.map(Step.seek) ?? .done
            }
            guard globAccepts(name) else {
                // A later name under this folder may still match: keep scanning inside it.
                position = .afterItem(name)
                return .next
            }
            if emitted == maxResults { return .full }
            prefixes.append(String(decoding: folder, as: UTF8.self))
            if includeTrailingDelimiter, cut.upperBound == name.endIndex {
                items.append(String(decoding: name, as: UTF8.self))
            }
            emitted += 1
            lastEmitted = .afterPrefix(folder)
            position = .afterPrefix(folder)
            return skip.map(Step.seek) ?? .done
        }
        position = .afterItem(name)
        if firebaseView, !Self.isValidPath(rest) { return .next }
        guard globAccepts(name) else { return .next }
        if emitted == maxResults { return .full }
        items.append(String(decoding: name, as: UTF8.self))
        emitted += 1
        lastEmitted = .afterItem(name)
        return .next
    }

    private mutating func globAccepts(_ name: [UInt8]) -> Bool {
        guard let glob else { return true }
        return glob.matches(utf8: name, work: &globWork)
    }

    /// The page so far. `more`: entries may follow (the page filled); the cursor resumes after the last one.
    func page(more: Bool) -> ListPage {
        ListPage(items: items, prefixes: prefixes, nextCursor: more ? lastEmitted?.encoded : nil)
    }

    /// The page so far, cut short after a scan budget: resumes after the last name looked at.
    func pageCutShort() -> ListPage {
        ListPage(items: items, prefixes: prefixes, nextCursor: (position ?? lastEmitted)?.encoded)
    }

    /// Firebase's validity rule for the part of a name after the request prefix: `/`-separated segments, none
    /// empty (so no `//`, no leading or trailing `/`).
    static func isValidPath(_ path: ArraySlice<UInt8>) -> Bool {
        if path.isEmpty { return false }
        var previous = UInt8(ascii: "/")
        for byte in path {
            if byte == UInt8(ascii: "/") && previous == UInt8(ascii: "/") { return false }
            previous = byte
        }
        return previous != UInt8(ascii: "/")
    }

    /// The smallest key greater than every key starting with `key` (increment the last byte that is not 0xFF),
    /// or nil when no such key exists (also for the empty key: every name starts with it).
    static func successor(of key: [UInt8]) -> [UInt8]? {
        var result = key
        while let last = result.last {
            if last < 0xFF {
                result[result.count - 1] = last + 1
                return result
            }
            result.removeLast()
        }
        return nil
    }

    static func less(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// The Knuth–Morris–Pratt failure function of `needle`: `borders[k]` is the length of the longest proper
    /// prefix of `needle[...k]` that is also its suffix.
    static func borders(of needle: [UInt8]) -> [Int] {
        var borders = [Int](repeating: 0, count: needle.count)
        var length = 0
        for k in needle.indices.dropFirst() {
            while length > 0, needle[k] != needle[length] { length = borders[length - 1] }
            if needle[k] == needle[length] { length += 1 }
            borders[k] = length
        }
        return borders
    }

    /// The first occurrence of `needle` in `haystack`, in time linear in `haystack` (each byte is looked at
    /// a bounded number of times, amortized, whatever the needle), given `borders(of: needle)`.
    static func firstRange(of needle: [UInt8], borders: [Int], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var matched = 0
        for index in haystack.indices {
            while matched > 0, haystack[index] != needle[matched] { matched = borders[matched - 1] }
            if haystack[index] == needle[matched] { matched += 1 }
            if matched == needle.count { return (index + 1 - needle.count)..<(index + 1) }
        }
        return nil
    }
}
