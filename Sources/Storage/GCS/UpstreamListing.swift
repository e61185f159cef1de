import PortcullisCore

/// Builds `ListRequest` pages over an upstream that can only list flat names in byte order from a start point
/// (GCS `startOffset`, S3 `start-after`), driving the shared `ListPageBuilder`. Used by the GCS and S3 backends.
///
/// Our backend cursor is the last entry returned (`ListCursor`). A folder's children are skipped by restarting
/// the flat listing at the folder's successor, so a prefix appears exactly once in the listing. With
/// `includeMetadata`, items carry the metadata the listing returned (GCS returns whole resources); items it
/// did not describe (S3 lists keys and sizes only) are looked up with `describe`, a few at a time.
///
/// Every comparison here is on UTF-8 bytes (`ListPageBuilder` works on byte arrays): `String.hasPrefix` and
/// `==` compare canonical equivalents as equal, so a name like `"dir/\u{301}x"` would not "start with" `dir/`
/// and a cursor naming one spelling of a name would skip its canonically equivalent twin.
struct UpstreamListing {
    /// One listed name, with its metadata when the upstream listing returns it.
    struct Entry: Sendable {
        var name: String
        var metadata: ObjectMetadata?
    }

    /// One flat fetch: names ≥ `from` (inclusive) under the request prefix, at most `limit`, in byte order, and
    /// whether more follow.
    typealias Fetch =
        @Sendable (_ from: String, _ limit: Int) async throws(StorageError) -> (entries: [Entry], more: Bool)
    /// The metadata of one listed item, or nil when it no longer exists.
    typealias Describe = @Sendable (_ name: String) async throws(StorageError) -> ObjectMetadata?

    /// Most names one page may look at before it returns early (hidden names, names a glob rejects).
    static let scanBudget = 20_000
    /// Most glob work one page may spend before it returns early (`ListPageBuilder.globWorkBudget`).
    static let globWorkBudget = ListPageBuilder.globWorkBudget
    /// Most `describe` lookups in flight for one page.
    static let describeConcurrency = 8

    static func page(
        _ request: ListRequest, fetch: Fetch, describe: Describe? = nil, globWorkBudget: Int = globWorkBudget
    ) async throws(StorageError) -> ListPage {
        guard (1...1000).contains(request.maxResults) else { throw .invalidArgument("maxResults must be 1…1000") }
        var builder = try ListPageBuilder(request)
        if builder.isEmpty { return ListPage(items: [], prefixes: [], nextCursor: nil) }
        var described: [ObjectMetadata?] = []
        func finish(_ page: ListPage) async throws(StorageError) -> ListPage {
            guard request.includeMetadata else { return page }
            return try await complete(page, described, describe: describe)
        }
        // Names below `floor` are behind the scan (already fed, or inside a skipped folder).
        var floor = builder.startKey
        var scanned = 0
        while true {
            // A floor just after a name (`name` + NUL) is fetched from the name itself, which is then skipped:
            // no upstream is asked for a NUL in its start offset.
            let from = floor.last == 0 ? Array(floor.dropLast()) : floor
            let limit = min(1000, max(request.maxResults - builder.items.count - builder.prefixes.count + 1, 32))
            let (entries, more) = try await fetch(String(decoding: from, as: UTF8.self), limit)
            var lastName: [UInt8]?
            for entry in entries {
                let name = Array(entry.name.utf8)
                lastName = name
                if ListPageBuilder.less(name, floor) { continue }
                scanned += 1
                let itemsBefore = builder.items.count
                let step = builder.feed(name)
                if builder.items.count > itemsBefore { described.append(entry.metadata) }
                switch step {
                case .next: break
                case .seek(let key): floor = key
                case .full: return try await finish(builder.page(more: true))
                case .done: return try await finish(builder.page(more: false))
                }
                if builder.globWork >= globWorkBudget { return try await finish(builder.pageCutShort()) }
            }
            guard more, let lastName else { return try await finish(builder.page(more: false)) }
            if ListPageBuilder.less(floor, lastName + [0]) { floor = lastName + [0] }
            if scanned >= scanBudget { return try await finish(builder.pageCutShort()) }
        }
    }

    /// Fills `objects` for the page's items: what the listing returned, else `describe` (bounded concurrency).
    /// Items that vanished meanwhile are dropped.
    private static func complete(_ page: ListPage, _ known: [ObjectMetadata?], describe: Describe?)
        async throws(StorageError) -> ListPage
    {
        var found = known
        let missing = page.items.indices.filter { found[$0] == nil }
        if !missing.isEmpty {
            guard let describe else {
                throw .internalError("the listing returned no metadata and nothing can look it up")
            }
            let names = page.items
            let result: Result<[(Int, ObjectMetadata?)], StorageError> = await withTaskGroup(
                of: Result<(Int, ObjectMetadata?), StorageError>.self
            ) { group in
                var results: [(Int, ObjectMetadata?)] = []
                var failure: StorageError?
                var next = missing.makeIterator()
                func launch() {
                    guard let index = next.next() else { return }
                    group.addTask {
                        do throws(StorageError) { return .success((index, try await describe(names[index]))) } catch {
                            return .failure(error)
                        }
                    }
                }
                for _ in 0..<describeConcurrency { launch() }
                for await outcome in group {
                    switch outcome {
                    case .success(let pair): results.append(pair)
                    case .failure(let error): failure = failure ?? error
                    }
                    if failure == nil { launch() }
                }
                if let failure { return .failure(failure) }
                return .success(results)
            }
            for (index, metadata) in try result.get() { found[index] = metadata }
        }
        var out = page
        out.items = []
        out.objects = []
        for (index, name) in page.items.enumerated() {
            guard let metadata = found[index] else { continue }
            out.items.append(name)
            out.objects.append(metadata)
        }
        return out
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
