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
struct ListPageBuilder {
    let prefix: [UInt8]
    let delimiter: [UInt8]?
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
        if let delimiter, let cut = Self.firstRange(of: delimiter, in: rest) {
            let folder = Array(name[..<cut.upperBound])
            let skip = Self.successor(of: folder)
            if firebaseView, !Self.isValidPath(rest[..<cut.lowerBound]) {
                position = .afterPrefix(folder)
                return skip.map(Step.seek) ?? .done
            }
            guard glob?.matches(utf8: name) ?? true else {
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
        guard glob?.matches(utf8: name) ?? true else { return .next }
        if emitted == maxResults { return .full }
        items.append(String(decoding: name, as: UTF8.self))
        emitted += 1
        lastEmitted = .afterItem(name)
        return .next
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

    static func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index..<(index + needle.count)
            }
            index += 1
        }
        return nil
    }
}
