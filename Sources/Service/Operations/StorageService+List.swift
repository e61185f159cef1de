public import PortcullisCore
import Rules
import Storage

/// Listing: rules `list` on the folder, then one backend page, with the next page's cursor sealed.
extension StorageService {
    /// The default and largest page size.
    public static let maxPageSize = 1000

    /// One page of `query.bucket` under `query.prefix`.
    ///
    /// The rules judge `list` as `ListScope` defines: on the folder being listed, the prefix up to its last `/`
    /// (without it), `""` for the bucket root — so a prefix that ends mid-name (`photos/ca`) lists a subset of
    /// what `list` on `photos` allows — or else on the folder the prefix names, showing only what lies inside
    /// it. The page token is sealed and bound to the listing's shape (bucket, prefix, delimiter
    /// and every other option that changes which entries it holds).
    ///
    /// With `includeMetadata`, each item's metadata is returned only when the caller may read that object
    /// (admin, or rules `get` judged on it): `list` reveals names, and an object's metadata — its download
    /// tokens above all — is what a read reveals. Those per-item judgments are not counted as decisions; the
    /// request's decision is its `list`.
    public func list(_ query: ListQuery, caller: Caller, _ context: RequestContext) async throws(ServiceError)
        -> ListResult
    {
        let bucket = try bucket(query.bucket, context)
        guard (1...Self.maxPageSize).contains(query.maxResults) else {
            throw .badRequest("maxResults must be an integer between 1 and \(Self.maxPageSize) inclusive.")
        }
        let glob: NameGlob?
        do { glob = try query.matchGlob.map(NameGlob.init) } catch { throw .badRequest("Invalid matchGlob: \(error)") }
        let scope = try authorizeList(query, principal: caller.principal, context)
        let binding = query.cursorBinding
        var cursor: String?
        if let token = query.pageToken, !token.isEmpty {
            do {
                cursor = try ListCursor.open(sealer, token: token, binding: binding)
            } catch {
                throw .badRequest("Invalid pageToken: \(ServiceError(error).message)")
            }
        }
        let request = ListRequest(
            bucket: bucket.name, prefix: query.prefix, delimiter: query.delimiter,
            maxResults: query.maxResults, cursor: cursor, startOffset: query.startOffset,
            endOffset: query.endOffset, includeTrailingDelimiter: query.includeTrailingDelimiter,
            matchGlob: glob, firebaseView: query.firebaseView,
            includeMetadata: query.includeMetadata)
        var page = try await storage(context, "storage.list") { () async throws(StorageError) in
            try await bucket.backend.list(request)
        }
        if !caller.isAdmin { page = listable(page, query, scope: scope, principal: caller.principal) }
        page = Self.withoutStaging(page)
        var objects: [ObjectMetadata?] = []
        if query.includeMetadata {
            let now = Timestamp.now()
            objects = page.objects.map { meta in
                caller.isAdmin
                    || judge(
                        RulesRequest(
                            method: .get, bucket: meta.bucket, path: meta.name,
                            auth: caller.principal, time: now, resource: meta)
                    ).allowed
                    ? meta : nil
            }
        }
        return ListResult(
            items: page.items, prefixes: page.prefixes, objects: objects,
            nextPageToken: page.nextCursor.map { ListCursor(binding: binding, cursor: $0).seal(sealer) })
    }

    /// `page` without the multipart staging area (`multipartPrefix`): the service's own objects, never listed.
    static func withoutStaging(_ page: ListPage) -> ListPage {
        let hidden = { (name: String) in name.bytesHasPrefix(multipartPrefix) }
        let items = page.items.filter { !hidden($0) }
        let prefixes = page.prefixes.filter { !hidden($0) }
        guard items.count != page.items.count || prefixes.count != page.prefixes.count else { return page }
        var out = page
        out.items = items
        out.prefixes = prefixes
        out.objects = page.objects.filter { !hidden($0.name) }
        return out
    }

    /// The entries of `page` the caller may see: each name and prefix only if rules `list` allows the folder
    /// that holds it. A listing without `/` as its delimiter (recursive, another delimiter, a glob reaching
    /// below) returns names from folders under the one judged at the start; each such folder is judged once
    /// per page, and what it denies is left out — the page may then hold fewer entries than asked, and its
    /// next page token still continues the scan. A Firebase listing (`/` as delimiter) holds only entries of
    /// the folder already judged, and costs nothing more. These judgments are not counted as decisions: the
    /// request's decision is its first `list`.
    func listable(_ page: ListPage, _ query: ListQuery, scope: ListScope, principal: Principal?) -> ListPage {
        var page = page
        if scope.confinedTo != nil {
            let kept = page.items.indices.filter { scope.shows(page.items[$0]) }
            if kept.count != page.items.count {
                if !page.objects.isEmpty { page.objects = kept.map { page.objects[$0] } }
                page.items = kept.map { page.items[$0] }
            }
            page.prefixes = page.prefixes.filter { scope.shows($0) }
        }
        // With `/` as the delimiter an item's name has no `/` past the prefix and a prefix entry ends at its first
        // one, so every entry's folder is the prefix's: nothing to judge, no folder to compute per entry.
        if query.delimiter?.bytesEqual("/") == true { return page }
        let judged = ExactString(scope.folder)
        var verdicts: [ExactString: Bool] = [judged: true]
        let now = Timestamp.now()
        func allowed(_ folder: String) -> Bool {
            let key = ExactString(folder)
            if let known = verdicts[key] { return known }
            let verdict = judge(
                RulesRequest(
                    method: .list, bucket: query.bucket, path: folder, auth: principal, time: now, resource: nil,
                    delimiter: query.delimiter)
            ).allowed
            verdicts[key] = verdict
            return verdict
        }
        var filtered = page
        var kept: [Int] = []
        for (index, name) in page.items.enumerated() where allowed(Self.folder(of: name)) { kept.append(index) }
        if kept.count != page.items.count {
            filtered.items = kept.map { page.items[$0] }
            if !page.objects.isEmpty { filtered.objects = kept.map { page.objects[$0] } }
        }
        filtered.prefixes = page.prefixes.filter { allowed(Self.folder(holding: $0, delimiter: query.delimiter)) }
        return filtered
    }

    /// The folder a listed prefix belongs to: the prefix without its trailing delimiter, up to its last `/`
    /// (`users/alice/` with `/` → `users`; `users/alice/a.` with `.` → `users/alice`).
    static func folder(holding prefix: String, delimiter: String?) -> String {
        guard let delimiter, !delimiter.isEmpty, prefix.bytesHasSuffix(delimiter) else { return folder(of: prefix) }
        let utf8 = prefix.utf8
        let end = utf8.index(utf8.endIndex, offsetBy: -delimiter.utf8.count)
        return folder(of: String(prefix[..<end]))
    }

    /// The folder a listing of `prefix` covers, as rules `list` sees it: up to the last `/`, without it.
    static func folder(of prefix: String) -> String {
        guard let slash = prefix.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        let utf8 = prefix.utf8
        // `a//` lists folder `a` (the listing of an empty segment is the folder's own).
        while end > utf8.startIndex, utf8[utf8.index(before: end)] == UInt8(ascii: "/") {
            end = utf8.index(before: end)
        }
        return String(prefix[..<end])
    }
}

/// What a surface asks to list.
public struct ListQuery: Sendable, Equatable {
    public var bucket: String
    public var prefix: String
    public var delimiter: String?
    public var maxResults: Int
    /// A `nextPageToken` from an earlier page of the same listing.
    public var pageToken: String?
    /// Only names ≥ this / < this (byte order).
    public var startOffset: String?
    public var endOffset: String?
    /// Also list an object named exactly like a listed prefix as an item.
    public var includeTrailingDelimiter: Bool
    /// A Cloud Storage glob (`NameGlob`); an invalid one is 400.
    public var matchGlob: String?
    /// Hide the names Firebase hides (v0); false lists every name (the JSON API).
    public var firebaseView: Bool
    /// Return each item's metadata (where the caller may read it), not only its name.
    public var includeMetadata: Bool

    public init(
        bucket: String, prefix: String = "", delimiter: String? = nil,
        maxResults: Int = StorageService.maxPageSize, pageToken: String? = nil, startOffset: String? = nil,
        endOffset: String? = nil, includeTrailingDelimiter: Bool = false, matchGlob: String? = nil,
        firebaseView: Bool = true, includeMetadata: Bool = false
    ) {
        self.bucket = bucket
        self.prefix = prefix
        self.delimiter = delimiter.flatMap { $0.isEmpty ? nil : $0 }
        self.maxResults = maxResults
        self.pageToken = pageToken
        self.startOffset = startOffset.flatMap { $0.isEmpty ? nil : $0 }
        self.endOffset = endOffset.flatMap { $0.isEmpty ? nil : $0 }
        self.includeTrailingDelimiter = includeTrailingDelimiter
        self.matchGlob = matchGlob.flatMap { $0.isEmpty ? nil : $0 }
        self.firebaseView = firebaseView
        self.includeMetadata = includeMetadata
    }

    /// What a page token is bound to: everything that shapes the listing except the page size and the item
    /// representation. Options at their defaults add no key, so tokens of plain listings stay as they were.
    var cursorBinding: [String: String] {  // identity-ok: keys are fixed ASCII field names; values compared by bytes
        var binding = ["b": bucket, "p": prefix, "d": delimiter ?? ""]
        if let startOffset { binding["so"] = startOffset }
        if let endOffset { binding["eo"] = endOffset }
        if includeTrailingDelimiter { binding["t"] = "1" }
        if let matchGlob { binding["g"] = matchGlob }
        if !firebaseView { binding["v"] = "gcs" }
        return binding
    }
}

/// One page: object names and prefixes in one byte-ordered stream, and the sealed token of the next page.
public struct ListResult: Sendable, Equatable {
    public var items: [String]
    public var prefixes: [String]
    /// With `ListQuery.includeMetadata`, one per item (same order): its metadata when the caller may read the
    /// object, nil when only its name may be shown. Empty otherwise.
    public var objects: [ObjectMetadata?]
    public var nextPageToken: String?
}
