import PortcullisCore
import Storage
import Testing

/// Contract checks for the listing options beyond v0's (the Cloud Storage JSON API's `objects.list`): every
/// name shown, arbitrary prefixes and delimiters, offsets, trailing delimiters, globs, metadata per item.
extension BackendContract {
    func request(
        prefix: String = "", delimiter: String? = nil, maxResults: Int = 1000, cursor: String? = nil,
        startOffset: String? = nil, endOffset: String? = nil, trailing: Bool = false, glob: String? = nil,
        metadata: Bool = false
    ) throws -> ListRequest {
        ListRequest(
            bucket: bucket, prefix: prefix, delimiter: delimiter, maxResults: maxResults, cursor: cursor,
            startOffset: startOffset, endOffset: endOffset, includeTrailingDelimiter: trailing,
            matchGlob: try glob.map { try NameGlob($0) }, firebaseView: false, includeMetadata: metadata)
    }

    /// Every entry of a Cloud Storage view listing, page by page.
    func listAllEntries(_ base: ListRequest) async throws -> (items: [String], prefixes: [String]) {
        var items = [String](), prefixes = [String]()
        var request = base
        var pages = 0
        repeat {
            let page = try await backend.list(request)
            items += page.items
            prefixes += page.prefixes
            request.cursor = page.nextCursor
            pages += 1
            if pages > 10_000 { Issue.record("listing does not terminate"); break }
        } while request.cursor != nil
        return (items, prefixes)
    }

    func listCloudStorageView() async throws {
        for name in ["v/abc/", "v//foo", "v/bar//", "v/ok", "v/z/", "v/a-b-c", "v/a-d", "vx"] {
            try await put(name, [1])
        }
        let slash = try await backend.list(request(prefix: "v/", delimiter: "/"))
        #expect(slash.items == ["v/a-b-c", "v/a-d", "v/ok"])
        #expect(slash.prefixes == ["v//", "v/abc/", "v/bar/", "v/z/"])
        let flat = try await backend.list(request(prefix: "v/"))
        #expect(flat.items == ["v//foo", "v/a-b-c", "v/a-d", "v/abc/", "v/bar//", "v/ok", "v/z/"])
        // A prefix that ends mid-name, and a delimiter that is not `/` (nor one byte).
        let dashes = try await backend.list(request(prefix: "v/a", delimiter: "-"))
        #expect(dashes.items == ["v/abc/"])
        #expect(dashes.prefixes == ["v/a-"])
        let multi = try await backend.list(request(prefix: "v/", delimiter: "-b-"))
        #expect(multi.prefixes == ["v/a-b-"])
        #expect(!multi.items.contains("v/a-b-c"))
        let paged = try await listAllEntries(try request(prefix: "v/", delimiter: "/", maxResults: 1))
        #expect(paged.items == slash.items && paged.prefixes == slash.prefixes)
    }

    func listOffsets() async throws {
        for name in ["o/a", "o/b", "o/c/1", "o/c/2", "o/d", "o/e"] { try await put(name, [1]) }
        let middle = try await backend.list(request(prefix: "o/", startOffset: "o/b", endOffset: "o/d"))
        #expect(middle.items == ["o/b", "o/c/1", "o/c/2"])
        let folders = try await backend.list(
            request(prefix: "o/", delimiter: "/", startOffset: "o/c/2", endOffset: "o/e"))
        #expect(folders.prefixes == ["o/c/"], "a prefix is listed when a name in range lies under it")
        #expect(folders.items == ["o/d"])
        let below = try await backend.list(request(prefix: "o/", startOffset: "a"))
        #expect(below.items.count == 6, "a start offset below the prefix starts at the prefix")
        let empty = try await backend.list(request(prefix: "o/", startOffset: "o/d", endOffset: "o/b"))
        #expect(empty.items.isEmpty && empty.prefixes.isEmpty && empty.nextCursor == nil)
        let paged = try await listAllEntries(
            try request(prefix: "o/", maxResults: 2, startOffset: "o/b", endOffset: "o/e"))
        #expect(paged.items == ["o/b", "o/c/1", "o/c/2", "o/d"])
    }

    func listTrailingDelimiter() async throws {
        for name in ["t/dir/", "t/dir/x", "t/empty/", "t/file"] { try await put(name, [1]) }
        let without = try await backend.list(request(prefix: "t/", delimiter: "/"))
        #expect(without.items == ["t/file"])
        #expect(without.prefixes == ["t/dir/", "t/empty/"])
        let with = try await backend.list(request(prefix: "t/", delimiter: "/", trailing: true))
        #expect(with.items == ["t/dir/", "t/empty/", "t/file"])
        #expect(with.prefixes == ["t/dir/", "t/empty/"])
        // The object rides with its prefix: one entry per page, never split across pages.
        let paged = try await listAllEntries(try request(prefix: "t/", delimiter: "/", maxResults: 1, trailing: true))
        #expect(paged.items == with.items && paged.prefixes == with.prefixes)
    }

    func listGlob() async throws {
        for name in ["g/a.txt", "g/b.png", "g/sub/c.txt", "g/sub/deep/d.txt", "g/x.txt/y", "h/e.txt"] {
            try await put(name, [1])
        }
        #expect(try await backend.list(request(glob: "g/*.txt")).items == ["g/a.txt"])
        #expect(
            try await backend.list(request(glob: "g/**.txt")).items
                == ["g/a.txt", "g/sub/c.txt", "g/sub/deep/d.txt"])
        #expect(
            try await backend.list(request(glob: "**/*.txt")).items
                == ["g/a.txt", "g/sub/c.txt", "g/sub/deep/d.txt", "h/e.txt"])
        #expect(try await backend.list(request(glob: "g/{a,b}.*")).items == ["g/a.txt", "g/b.png"])
        #expect(try await backend.list(request(glob: "g/[!a]?png")).items == ["g/b.png"])
        // With a delimiter, a prefix is listed when a matching name lies under it (here not the first one).
        let folders = try await backend.list(request(prefix: "g/", delimiter: "/", glob: "g/sub/deep/*"))
        #expect(folders.prefixes == ["g/sub/"])
        #expect(folders.items.isEmpty)
        let paged = try await listAllEntries(try request(maxResults: 1, glob: "**.txt"))
        #expect(paged.items == ["g/a.txt", "g/sub/c.txt", "g/sub/deep/d.txt", "h/e.txt"])
    }

    func listWithMetadata() async throws {
        var attributes = ObjectAttributes(contentType: "text/plain", customMetadata: ["k": "v"])
        attributes.downloadTokens = ["tok"]
        let written = try await put("m/one", Array("hello".utf8), attributes: attributes)
        try await put("m/two", Array("world!".utf8))
        try await put("m/sub/three", [1])
        let page = try await backend.list(request(prefix: "m/", delimiter: "/", metadata: true))
        #expect(page.items == ["m/one", "m/two"])
        #expect(page.prefixes == ["m/sub/"])
        #expect(page.objects.map(\.name) == ["m/one", "m/two"])
        let one = try #require(page.objects.first)
        #expect(one.generation == written.generation && one.size == 5 && one.md5Hash == written.md5Hash)
        #expect(one.contentType == "text/plain" && one.customMetadata == ["k": "v"] && one.downloadTokens == ["tok"])
        #expect(page.objects.last?.size == 6)
        let plain = try await backend.list(request(prefix: "m/", delimiter: "/"))
        #expect(plain.objects.isEmpty)
    }
}
