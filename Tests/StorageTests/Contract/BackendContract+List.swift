import PortcullisCore
import Storage
import Testing

/// Contract checks for listing (the v0 list semantics of `ListRequest`).
extension BackendContract {
    // MARK: - List

    func listDelimiterAndPrefixes() async throws {
        for name in [
            "photos/cover.png", "photos/2024/a.png", "photos/2024/b.png", "photos/2025/c.png",
            "photos/2025/deep/d.png", "photos.txt", "other/x", "top",
        ] {
            try await put(name, Array(name.utf8))
        }
        let root = try await backend.list(
            ListRequest(bucket: bucket, prefix: "", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(root.items == ["photos.txt", "top"])
        #expect(root.prefixes == ["other/", "photos/"])
        #expect(root.nextCursor == nil)
        let photos = try await backend.list(
            ListRequest(bucket: bucket, prefix: "photos/", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(photos.items == ["photos/cover.png"])
        #expect(photos.prefixes == ["photos/2024/", "photos/2025/"])
        let flat = try await backend.list(
            ListRequest(bucket: bucket, prefix: "photos/", delimiter: nil, maxResults: 1000, cursor: nil))
        #expect(
            flat.items == [
                "photos/2024/a.png", "photos/2024/b.png", "photos/2025/c.png", "photos/2025/deep/d.png",
                "photos/cover.png",
            ])
        #expect(flat.prefixes.isEmpty)
        // maxResults counts items and prefixes together, and each prefix appears once across pages.
        let (items, prefixes, order) = try await listAll(prefix: "photos/", delimiter: "/", pageSize: 1)
        #expect(items == ["photos/cover.png"])
        #expect(prefixes == ["photos/2024/", "photos/2025/"])
        #expect(order == ["photos/2024/", "photos/2025/", "photos/cover.png"])
        let empty = try await backend.list(
            ListRequest(bucket: bucket, prefix: "nothing/", delimiter: "/", maxResults: 5, cursor: nil))
        #expect(empty.items.isEmpty && empty.prefixes.isEmpty && empty.nextCursor == nil)
    }

    func listInvalidNamesFiltered() async throws {
        for name in ["listAll/abc/", "listAll//foo", "listAll/bar//", "listAll/baz//qux", "listAll/ok", "listAll/z/"] {
            try await put(name, [1])
        }
        let page = try await backend.list(
            ListRequest(bucket: bucket, prefix: "listAll/", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(page.items == ["listAll/ok"])
        #expect(page.prefixes == ["listAll/abc/", "listAll/bar/", "listAll/baz/", "listAll/z/"])
        let placeholder = try await backend.list(
            ListRequest(bucket: bucket, prefix: "listAll/abc/", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(placeholder.items.isEmpty && placeholder.prefixes.isEmpty)
        let flat = try await backend.list(
            ListRequest(bucket: bucket, prefix: "listAll/", delimiter: nil, maxResults: 1000, cursor: nil))
        #expect(flat.items == ["listAll/ok"])
        // Filtering happens before counting: one entry per page, no empty pages in between.
        let (items, prefixes, _) = try await listAll(prefix: "listAll/", delimiter: "/", pageSize: 1)
        #expect(items == ["listAll/ok"])
        #expect(prefixes == ["listAll/abc/", "listAll/bar/", "listAll/baz/", "listAll/z/"])
        // Invalid names are still ordinary objects for every other operation.
        #expect(try await get("listAll//foo").1 == [1])
    }

    func listPagination() async throws {
        var names = [String]()
        for i in 0..<paginationScale.items { names.append("pg/n\(String(i + 10_000).dropFirst())") }
        for folder in 0..<paginationScale.folders {
            for child in 0..<5 { names.append("pg/f\(String(folder + 1000).dropFirst())/c\(child)") }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for name in names {
                if inFlight >= 16 { try await group.next(); inFlight -= 1 }
                group.addTask { try await put(name, Array(name.utf8)) }
                inFlight += 1
            }
            try await group.waitForAll()
        }
        let sortedNames = names.sorted(by: Self.byteOrder)
        let expectedItems = names.filter { $0.hasPrefix("pg/n") }.sorted(by: Self.byteOrder)
        let expectedPrefixes = (0..<paginationScale.folders).map { "pg/f\(String($0 + 1000).dropFirst())/" }
        let expectedOrder = (expectedItems + expectedPrefixes).sorted(by: Self.byteOrder)
        for pageSize in [1, 7, 1000] {
            let (items, prefixes, order) = try await listAll(prefix: "pg/", delimiter: "/", pageSize: pageSize)
            #expect(items == expectedItems, "page size \(pageSize)")
            #expect(prefixes == expectedPrefixes, "page size \(pageSize)")
            #expect(order == expectedOrder, "page size \(pageSize): entries once each, in byte order")
            let flat = try await listAll(prefix: "", delimiter: nil, pageSize: pageSize)
            #expect(flat.items == sortedNames, "flat, page size \(pageSize)")
        }
    }

    func listCursorResume() async throws {
        for name in ["c/a", "c/b", "c/d", "c/e/1", "c/e/2", "c/f"] { try await put(name, [1]) }
        let first = try await backend.list(
            ListRequest(bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 2, cursor: nil))
        #expect(first.items == ["c/a", "c/b"])
        let cursor = try #require(first.nextCursor)
        // Written after the cursor position: visible; before it: not (resume is strictly after the last key).
        try await put("c/c", [1])
        try await put("c/aa", [1])
        let second = try await backend.list(
            ListRequest(bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 3, cursor: cursor))
        #expect(second.items == ["c/c", "c/d"])
        #expect(second.prefixes == ["c/e/"])
        let third = try await backend.list(
            ListRequest(
                bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 3,
                cursor: second.nextCursor))
        #expect(third.items == ["c/f"])
        #expect(third.prefixes.isEmpty)
        #expect(third.nextCursor == nil)
        // The same cursor replayed gives the same page (cursors are positions, not sessions).
        let replay = try await backend.list(
            ListRequest(bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 3, cursor: cursor))
        #expect(replay == second)
    }
}
