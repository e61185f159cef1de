import PortcullisCore

/// A forward cursor over one bucket's names under a prefix, in UTF-8 byte order: what `ListScanner` walks.
/// The SQLite implementation is `IndexNameCursor`; tests use an in-memory array.
protocol NameCursor {
    /// Positions the cursor at the first name ≥ `key`.
    mutating func seek(_ key: [UInt8]) throws(StorageError)
    /// The next name, or nil past the last name under the prefix.
    mutating func next() throws(StorageError) -> [UInt8]?
}

/// Where a listing resumes: strictly after an item, or after every name under an emitted prefix.
///
/// Encoded as `i:<name>` / `p:<prefix>`; the Gateway seals it (binding bucket, prefix and delimiter), so the
/// backend only checks that it is well formed and lies under the request prefix.
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

    /// The first key the next page may start at.
    var resumeKey: [UInt8]? {
        switch self {
        case .afterItem(let name): name + [0]
        case .afterPrefix(let prefix): ListScanner.successor(of: prefix)
        }
    }

    var key: [UInt8] {
        switch self {
        case .afterItem(let key), .afterPrefix(let key): key
        }
    }
}

/// One list page as an ordered walk of the name index (the v0 §5.6 contract of `ListRequest`).
///
/// Cost is O(page): items are consumed one row at a time, and when a name lies under a sub-prefix
/// (`prefix + "seg/"`), the prefix is emitted once and the cursor SEEKS past every name under it (to
/// `prefix + "seg0"`, the successor of the prefix) instead of scanning them. Invalid names (after the request
/// prefix: an empty segment or a trailing `/`) are dropped before counting; an emitted prefix is checked the
/// same way. A page ends at `maxResults` entries, or early after `scanBudget` rows when a run of invalid names
/// is long, so even a hostile bucket cannot make one page unbounded; the cursor then resumes after the last
/// row looked at.
struct ListScanner {
    let prefix: [UInt8]
    let delimiter: [UInt8]?
    let maxResults: Int
    var scanBudget = 100_000

    init(prefix: String, delimiter: String?, maxResults: Int) {
        self.prefix = Array(prefix.utf8)
        self.delimiter = delimiter.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.maxResults = maxResults
    }

    /// The exclusive upper bound of names starting with `prefix`, or nil when every name is below it.
    var upperBound: [UInt8]? { Self.successor(of: prefix) }

    func page(after cursor: ListCursor?, names: inout some NameCursor) throws(StorageError) -> ListPage {
        var items = [String](), prefixes = [String]()
        let prefixPath = prefix.last == UInt8(ascii: "/") ? prefix.dropLast() : prefix[...]
        guard maxResults > 0, prefix.isEmpty || Self.isValidPath(prefixPath, allowEmpty: false) else {
            return ListPage(items: [], prefixes: [], nextCursor: nil)
        }
        var start = prefix
        if let cursor {
            guard cursor.key.starts(with: prefix) else { throw .invalidArgument("Invalid page token.") }
            guard let resume = cursor.resumeKey else { return ListPage(items: [], prefixes: [], nextCursor: nil) }
            start = Self.less(resume, prefix) ? prefix : resume
        }
        var emitted = 0, scanned = 0
        var last: ListCursor?
        try names.seek(start)
        while let name = try names.next() {
            guard name.starts(with: prefix) else { break }
            scanned += 1
            let rest = name[prefix.count...]
            let entry: ListCursor
            let valid: Bool
            if let delimiter, let cut = Self.firstRange(of: delimiter, in: rest) {
                let subPrefix = Array(name[..<cut.upperBound])
                entry = .afterPrefix(subPrefix)
                valid = Self.isValidPath(rest[..<cut.lowerBound], allowEmpty: false)
            } else {
                entry = .afterItem(name)
                valid = Self.isValidPath(rest, allowEmpty: false)
            }
            if valid {
                if emitted == maxResults {
                    return ListPage(items: items, prefixes: prefixes, nextCursor: last?.encoded)
                }
                switch entry {
                case .afterItem(let key): items.append(String(decoding: key, as: UTF8.self))
                case .afterPrefix(let key): prefixes.append(String(decoding: key, as: UTF8.self))
                }
                emitted += 1
                last = entry
            }
            if case .afterPrefix(let subPrefix) = entry {
                guard let next = Self.successor(of: subPrefix) else { break }
                try names.seek(next)
            }
            if scanned >= scanBudget {
                // Long run of hidden names: stop here; the next page resumes after this row.
                return ListPage(items: items, prefixes: prefixes, nextCursor: entry.encoded)
            }
        }
        return ListPage(items: items, prefixes: prefixes, nextCursor: nil)
    }

    /// Firebase's validity rule for the part of a name after the request prefix: `/`-separated segments, none
    /// empty (so no `//`, no leading or trailing `/`). `allowEmpty` accepts the empty path (the bucket root).
    static func isValidPath(_ path: ArraySlice<UInt8>, allowEmpty: Bool) -> Bool {
        if path.isEmpty { return allowEmpty }
        var previous = UInt8(ascii: "/")
        for byte in path {
            if byte == UInt8(ascii: "/") && previous == UInt8(ascii: "/") { return false }
            previous = byte
        }
        return previous != UInt8(ascii: "/")
    }

    /// The smallest key greater than every key starting with `key` (increment the last byte that is not 0xFF),
    /// or nil when no such key exists.
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

    private static func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
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
