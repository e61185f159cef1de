import PortcullisCore

/// Listing over ListObjectsV2.
///
/// Keys are requested with `encoding-type=url` and percent-decoded: S3 otherwise returns them raw in XML, and a
/// single key holding a character XML 1.0 cannot carry (C0 controls other than tab, U+FFFE, U+FFFF) makes the
/// whole document unparsable — one writer could deny listing of the bucket to everyone. Servers also echo
/// what they were sent, or the last key, unencoded: moto's `StartAfter`, and Ceph RGW's `NextContinuationToken`
/// (the raw last key, even with `encoding-type=url`). So pages are walked with `start-after` set to the last key
/// listed (never with the continuation token), and the echo elements, which the listing never reads, are cut
/// out of the document before it is parsed (`S3XMLDocument.withoutEchoes`).
extension S3Backend {
    public func list(_ request: ListRequest) async throws(StorageError) -> ListPage {
        let bucket = request.bucket
        return try await UpstreamListing.page(
            request,
            fetch: { [self] (from: String, limit: Int) async throws(StorageError) in
                let (names, more) = try await fetchVisible(from: from, limit: limit, prefix: request.prefix)
                return (names.map { UpstreamListing.Entry(name: $0) }, more)
            },
            describe: { [self] (name: String) async throws(StorageError) in
                // ListObjectsV2 carries no user metadata: one HEAD per listed item.
                guard let path = try? ObjectPath(bucket: bucket, name: name) else { return nil }
                do throws(StorageError) { return try await metadata(of: path) } catch .notFound { return nil }
            })
    }

    /// One flat fetch of names ≥ `from`, with the hidden staging names cut out: a fetch that runs into
    /// `stagingPrefix` stops there and continues after it, so the names returned stay contiguous in byte order.
    func fetchVisible(from: String, limit: Int, prefix: String) async throws(StorageError) -> (
        names: [String], more: Bool
    ) {
        let hiddenEnd = UpstreamListing.successor(Self.stagingPrefix)!
        var start = from
        if Self.isHidden(start) { start = hiddenEnd }
        let first = try await fetchFlat(from: start, limit: limit, prefix: prefix)
        guard let cut = first.names.firstIndex(where: Self.isHidden) else { return first }
        let before = Array(first.names[..<cut])
        let after = try await fetchFlat(from: hiddenEnd, limit: max(1, limit - before.count), prefix: prefix)
        return (before + after.names, after.more)
    }

    /// Names ≥ `from` under `prefix`, in byte order, and whether more follow: `limit` of them or more, or fewer
    /// at the end of the listing. `start-after` is exclusive and may lie below `from` (`startAfter(below:)`); names
    /// between it and `from` are dropped, and the walk continues with S3's continuation token until `limit` names
    /// remain — so a page that holds only `from` itself (which the caller may skip) never comes back alone.
    func fetchFlat(from: String, limit: Int, prefix: String) async throws(StorageError) -> (names: [String], more: Bool)
    {
        var query = [("encoding-type", "url"), ("list-type", "2"), ("max-keys", String(limit)), ("prefix", prefix)]
        let startAfter = Self.startAfter(below: from)
        if !startAfter.isEmpty { query.append(("start-after", startAfter)) }
        var names = [String]()
        while true {
            let page = try await listObjects(query, op: "list")
            names += page.keys.map(\.name).filter { !$0.bytesLess(than: from) }
            if names.count >= limit || !page.isTruncated { return (names, page.isTruncated) }
            guard let last = page.keys.last?.name else {
                throw .internalError("S3 listing is truncated but lists no key")
            }
            query.removeAll { $0.0.bytesEqual("start-after") }
            query.append(("start-after", last))
        }
    }

    /// One ListObjectsV2 call whose query asked for `encoding-type=url`: keys decoded, with their sizes.
    func listObjects(_ query: [(String, String)], op: String) async throws(StorageError) -> S3ListPage {
        let (_, body) = try await exchange("GET", url(nil, query: query), op: op, idempotent: true)
        let document = try S3XMLDocument.parse(S3XMLDocument.withoutEchoes(body))
        guard document.keys.count == document.sizes.count else { throw .internalError("S3 listing without sizes") }
        var keys = [(name: String, size: Int64)]()
        keys.reserveCapacity(document.keys.count)
        for (encoded, size) in zip(document.keys, document.sizes) {
            guard let name = PercentEncoding.decode(encoded, plusIsSpace: true) else {
                throw .internalError("S3 listed a key that does not decode: \(encoded)")
            }
            keys.append((name, size))
        }
        return S3ListPage(keys: keys, isTruncated: document.isTruncated)
    }

    /// A `start-after` value below `name`: its predecessor, cut before the first character XML 1.0 forbids.
    static func startAfter(below name: String) -> String {
        let predecessor = UpstreamListing.predecessor(name)
        let scalars = predecessor.unicodeScalars
        guard let cut = scalars.firstIndex(where: { !XMLReader.isXMLCharacter($0.value) }) else { return predecessor }
        return String(scalars[..<cut])
    }
}

/// One decoded ListObjectsV2 page.
struct S3ListPage {
    var keys: [(name: String, size: Int64)]
    var isTruncated: Bool
}
