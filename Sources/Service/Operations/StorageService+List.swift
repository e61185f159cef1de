import PortcullisCore
import Storage

/// Listing: rules `list` on the folder, then one backend page, with the next page's cursor sealed.
extension StorageService {
    /// The default and largest page size.
    public static let maxPageSize = 1000

    /// One page of `query.bucket` under `query.prefix`.
    ///
    /// The rules judge `list` on the folder being listed: the prefix up to its last `/` (without it), `""` for
    /// the bucket root — so a prefix that ends mid-name (`photos/ca`) lists a subset of what `list` on
    /// `photos` allows. The page token is sealed and bound to the listing's shape (bucket, prefix, delimiter).
    public func list(_ query: ListQuery, caller: Caller, _ context: RequestContext) async throws(ServiceError)
        -> ListResult {
        let bucket = try bucket(query.bucket)
        guard (1...Self.maxPageSize).contains(query.maxResults) else {
            throw .badRequest("maxResults must be an integer between 1 and \(Self.maxPageSize) inclusive.")
        }
        try authorize(.list, (query.bucket, Self.folder(of: query.prefix)), principal: caller.principal,
                      resource: nil, delimiter: query.delimiter, context)
        let binding = query.cursorBinding
        var cursor: String?
        if let token = query.pageToken, !token.isEmpty {
            do {
                cursor = try ListCursor.open(sealer, token: token, binding: binding)
            } catch {
                throw .badRequest("Invalid pageToken: \(ServiceError(error).message)")
            }
        }
        let request = ListRequest(bucket: bucket.name, prefix: query.prefix, delimiter: query.delimiter,
                                  maxResults: query.maxResults, cursor: cursor)
        let page = try await storage(context) { () async throws(StorageError) in try await bucket.backend.list(request) }
        return ListResult(items: page.items, prefixes: page.prefixes,
                          nextPageToken: page.nextCursor.map { ListCursor(binding: binding, cursor: $0).seal(sealer) })
    }

    /// The folder a listing of `prefix` covers, as rules `list` sees it: up to the last `/`, without it.
    static func folder(of prefix: String) -> String {
        guard let slash = prefix.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        let utf8 = prefix.utf8
        // `a//` lists folder `a` (the listing of an empty segment is the folder's own).
        while end > utf8.startIndex, utf8[utf8.index(before: end)] == UInt8(ascii: "/") { end = utf8.index(before: end) }
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

    public init(bucket: String, prefix: String = "", delimiter: String? = nil,
                maxResults: Int = StorageService.maxPageSize, pageToken: String? = nil) {
        self.bucket = bucket
        self.prefix = prefix
        self.delimiter = delimiter
        self.maxResults = maxResults
        self.pageToken = pageToken
    }

    /// What a page token is bound to: everything that shapes the listing except the page size.
    var cursorBinding: [String: String] {
        ["b": bucket, "p": prefix, "d": delimiter ?? ""]
    }
}

/// One page: object names and prefixes in one byte-ordered stream, and the sealed token of the next page.
public struct ListResult: Sendable, Equatable {
    public var items: [String]
    public var prefixes: [String]
    public var nextPageToken: String?
}
