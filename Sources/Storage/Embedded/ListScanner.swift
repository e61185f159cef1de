import PortcullisCore

/// A forward cursor over one bucket's names under a prefix, in UTF-8 byte order: what `ListScanner` walks.
/// The SQLite implementation is `IndexNameCursor`; tests use an in-memory array.
protocol NameCursor {
    /// Positions the cursor at the first name ≥ `key`.
    mutating func seek(_ key: [UInt8]) throws(StorageError)
    /// The next name, or nil past the last name in range.
    mutating func next() throws(StorageError) -> [UInt8]?
}

/// One list page as an ordered walk of the name index, with the semantics of `ListPageBuilder`.
///
/// Cost is O(page): names are consumed one row at a time, and when a name lies under a listed sub-prefix
/// (`prefix + "seg/"`), the cursor SEEKS past every name under it (to the prefix's successor) instead of
/// scanning them. A page ends at `maxResults` entries, or early after `scanBudget` rows when a run of names
/// that cannot be listed is long (hidden names, names a glob rejects), or once the glob has spent
/// `globWorkBudget` word operations on the names it looked at (a costly pattern over long names), so neither a
/// hostile bucket nor a hostile pattern can make one page unbounded; the cursor then resumes after the last row
/// looked at.
struct ListScanner {
    let request: ListRequest
    var scanBudget = 100_000
    var globWorkBudget = ListPageBuilder.globWorkBudget

    init(_ request: ListRequest) { self.request = request }

    /// The v0 shape: a prefix, maybe the `/` delimiter, Firebase's view.
    init(prefix: String, delimiter: String?, maxResults: Int) {
        self.init(ListRequest(bucket: "", prefix: prefix, delimiter: delimiter, maxResults: maxResults, cursor: nil))
    }

    /// The exclusive upper bound of the names this listing can reach (the prefix's successor, or the end
    /// offset), or nil when every name above the start may be.
    var upperBound: [UInt8]? { (try? ListPageBuilder(request))?.endKey }

    func page(after cursor: ListCursor?, names: inout some NameCursor) throws(StorageError) -> ListPage {
        var request = self.request
        request.cursor = cursor?.encoded
        var builder = try ListPageBuilder(request)
        if builder.isEmpty { return ListPage(items: [], prefixes: [], nextCursor: nil) }
        var scanned = 0
        try names.seek(builder.startKey)
        while let name = try names.next() {
            scanned += 1
            switch builder.feed(name) {
            case .next: break
            case .seek(let key): try names.seek(key)
            case .full: return builder.page(more: true)
            case .done: return builder.page(more: false)
            }
            if scanned >= scanBudget || builder.globWork >= globWorkBudget { return builder.pageCutShort() }
        }
        return builder.page(more: false)
    }
}
