import PortcullisCore
import Testing

@testable import Storage

/// The list algorithm over an in-memory index that counts how many rows it hands out, so "O(page), not
/// O(bucket)" is checked exactly rather than timed.
struct ArrayNameCursor: NameCursor {
    let names: [[UInt8]]
    var position = 0
    var rowsRead = 0
    var seeks = 0

    init(_ names: [String]) {
        self.names = names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    mutating func seek(_ key: [UInt8]) {
        seeks += 1
        var low = 0, high = names.count
        while low < high {
            let mid = (low + high) / 2
            if names[mid].lexicographicallyPrecedes(key) { low = mid + 1 } else { high = mid }
        }
        position = low
    }

    mutating func next() -> [UInt8]? {
        guard position < names.count else { return nil }
        defer { position += 1 }
        rowsRead += 1
        return names[position]
    }
}

@Suite struct ListScannerTests {
    @Test func subPrefixesAreSkippedBySeekingNotScanning() throws {
        var names = [String]()
        for folder in 0..<50 { for file in 0..<1000 { names.append("root/d\(folder + 100)/f\(file)") } }
        names.append("root/zz")
        var cursor = ArrayNameCursor(names)
        let page = try ListScanner(prefix: "root/", delimiter: "/", maxResults: 1000).page(after: nil, names: &cursor)
        #expect(page.prefixes.count == 50)
        #expect(page.items == ["root/zz"])
        #expect(page.nextCursor == nil)
        #expect(cursor.rowsRead == 51, "one row per emitted entry, not one per name")
    }

    @Test func pageCostDoesNotGrowWithPosition() throws {
        let names = (0..<100_000).map { "n/\(String($0 + 1_000_000).dropFirst())" }
        var cursor = ArrayNameCursor(names)
        let scanner = ListScanner(prefix: "n/", delimiter: "/", maxResults: 1000)
        let first = try scanner.page(after: nil, names: &cursor)
        let firstRows = cursor.rowsRead
        var late = ArrayNameCursor(names)
        let lastPage = try scanner.page(after: try ListCursor(decoding: "i:n/098999"), names: &late)
        #expect(first.items.count == 1000)
        #expect(lastPage.items.count == 1000)
        #expect(lastPage.items.first == "n/099000")
        #expect(lastPage.nextCursor == nil)
        #expect(late.rowsRead <= firstRows)
    }

    @Test func prefixCursorResumesAfterTheWholePrefix() throws {
        var cursor = ArrayNameCursor(["a/b/1", "a/b/2", "a/b0", "a/c"])
        let scanner = ListScanner(prefix: "a/", delimiter: "/", maxResults: 1)
        let first = try scanner.page(after: nil, names: &cursor)
        #expect(first.prefixes == ["a/b/"])
        let second = try scanner.page(after: try ListCursor(decoding: try #require(first.nextCursor)), names: &cursor)
        #expect(second.items == ["a/b0"])
        let third = try scanner.page(after: try ListCursor(decoding: try #require(second.nextCursor)), names: &cursor)
        #expect(third.items == ["a/c"])
        #expect(third.nextCursor == nil)
    }

    @Test func hiddenNamesAreDroppedBeforeCounting() throws {
        var cursor = ArrayNameCursor(["p/", "p//x", "p/a//", "p/b", "p/c/", "p/d"])
        let page = try ListScanner(prefix: "p/", delimiter: "/", maxResults: 3).page(after: nil, names: &cursor)
        #expect(page.prefixes == ["p/a/", "p/c/"])
        #expect(page.items == ["p/b"])
        let next = try #require(page.nextCursor)
        let rest = try ListScanner(prefix: "p/", delimiter: "/", maxResults: 3).page(
            after: ListCursor(decoding: next), names: &cursor)
        #expect(rest.items == ["p/d"])
        #expect(rest.nextCursor == nil)
    }

    @Test func aLongRunOfHiddenNamesEndsThePageEarly() throws {
        var names = (0..<500).map { "h//\($0 + 1000)" }
        names.append("h/visible")
        var cursor = ArrayNameCursor(names)
        var scanner = ListScanner(prefix: "h/", delimiter: nil, maxResults: 10)
        scanner.scanBudget = 100
        var items = [String]()
        var token: String?
        var pages = 0
        repeat {
            let page = try scanner.page(after: try token.map { try ListCursor(decoding: $0) }, names: &cursor)
            #expect(cursor.rowsRead <= 101 * (pages + 1))
            items += page.items
            token = page.nextCursor
            pages += 1
        } while token != nil
        #expect(items == ["h/visible"])
        #expect(pages == 6)
    }

    @Test func cursorsMustLieUnderThePrefix() {
        var cursor = ArrayNameCursor(["a/1"])
        #expect(throws: StorageError.self) {
            _ = try ListScanner(prefix: "a/", delimiter: "/", maxResults: 5).page(
                after: .afterItem(Array("b/1".utf8)), names: &cursor)
        }
        #expect(throws: StorageError.self) { _ = try ListCursor(decoding: "garbage") }
    }

    @Test func aPrefixWithAnEmptySegmentListsNothing() throws {
        var cursor = ArrayNameCursor(["a//b", "a//c/d"])
        let page = try ListScanner(prefix: "a//", delimiter: "/", maxResults: 5).page(after: nil, names: &cursor)
        #expect(page.items.isEmpty && page.prefixes.isEmpty)
    }

    /// 40 names of 1,000 bytes under `g/`, and a 1,024-byte glob that matches them all, at the same cost each.
    static let costlyNames = (0..<40).map { "g/\($0 + 10)" + String(repeating: "a", count: 996) }
    static func costlyGlob() throws -> (glob: NameGlob, perName: Int) {
        let glob = try NameGlob("g/{}" + String(repeating: "*?", count: 510))
        var perName = 0
        #expect(glob.matches(utf8: Array(costlyNames[0].utf8), work: &perName))
        #expect(perName > 1000 * 6 * 16, "17 words, 6 passes a scalar")
        return (glob, perName)
    }

    @Test func aCostlyGlobEndsThePageEarlyAndTheListingResumes() throws {
        let (glob, perName) = try Self.costlyGlob()
        var scanner = ListScanner(
            ListRequest(
                bucket: "", prefix: "g/", delimiter: nil, maxResults: 1000, cursor: nil, matchGlob: glob,
                firebaseView: false))
        scanner.globWorkBudget = 5 * perName
        var cursor = ArrayNameCursor(Self.costlyNames)
        var pages: [[String]] = []
        var token: String?
        repeat {
            let page = try scanner.page(after: try token.map { try ListCursor(decoding: $0) }, names: &cursor)
            pages.append(page.items)
            token = page.nextCursor
        } while token != nil && pages.count < 100
        #expect(pages.dropLast().allSatisfy { $0.count == 5 }, "\(pages.map(\.count))")
        #expect(pages.flatMap { $0 } == Self.costlyNames)
        #expect(cursor.rowsRead == 40, "each name looked at once")
        // The default budget takes them in one page.
        var whole = ArrayNameCursor(Self.costlyNames)
        scanner.globWorkBudget = ListPageBuilder.globWorkBudget
        #expect(try scanner.page(after: nil, names: &whole).items.count == 40)
    }

    @Test func aCostlyGlobEndsAnUpstreamPageEarlyToo() async throws {
        let (glob, perName) = try Self.costlyGlob()
        let names = Self.costlyNames
        let fetch: UpstreamListing.Fetch = { from, limit in
            let rest = names.filter { !Array($0.utf8).lexicographicallyPrecedes(Array(from.utf8)) }
            return (rest.prefix(limit).map { UpstreamListing.Entry(name: $0) }, rest.count > limit)
        }
        var request = ListRequest(
            bucket: "", prefix: "g/", delimiter: nil, maxResults: 1000, cursor: nil, matchGlob: glob,
            firebaseView: false)
        var pages: [[String]] = []
        repeat {
            let page = try await UpstreamListing.page(request, fetch: fetch, globWorkBudget: 7 * perName)
            pages.append(page.items)
            request.cursor = page.nextCursor
        } while request.cursor != nil && pages.count < 100
        #expect(pages.dropLast().allSatisfy { $0.count == 7 }, "\(pages.map(\.count))")
        #expect(pages.flatMap { $0 } == names)
    }

    @Test func delimiterSearchIsLinear() {
        // Against a plain search, over every needle and haystack of a two-letter alphabet up to a size.
        func naive(_ needle: [UInt8], _ haystack: ArraySlice<UInt8>) -> Range<Int>? {
            guard !needle.isEmpty else { return nil }
            var i = haystack.startIndex
            while i + needle.count <= haystack.endIndex {
                if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i..<(i + needle.count) }
                i += 1
            }
            return nil
        }
        func strings(upTo length: Int) -> [[UInt8]] {
            var all: [[UInt8]] = [[]]
            var level: [[UInt8]] = [[]]
            for _ in 0..<length {
                level = level.flatMap { [$0 + [0x61], $0 + [0x62]] }
                all += level
            }
            return all
        }
        let haystacks = strings(upTo: 9)
        for needle in strings(upTo: 4).dropFirst() {
            let borders = ListPageBuilder.borders(of: needle)
            for haystack in haystacks {
                let slice = ([0x2F] + haystack)[1...]
                #expect(ListPageBuilder.firstRange(of: needle, borders: borders, in: slice) == naive(needle, slice))
            }
        }
        // The shape that made the plain search quadratic: a long delimiter that almost matches everywhere.
        let delimiter = String(repeating: "a", count: 500) + "b"
        var cursor = ArrayNameCursor(["p/" + String(repeating: "a", count: 1000), "p/" + delimiter + "x"])
        let page = try? ListScanner(
            ListRequest(
                bucket: "", prefix: "p/", delimiter: delimiter, maxResults: 10, cursor: nil, firebaseView: false)
        ).page(after: nil, names: &cursor)
        #expect(page?.items == ["p/" + String(repeating: "a", count: 1000)])
        #expect(page?.prefixes == ["p/" + delimiter])
    }

    @Test func successor() {
        #expect(ListPageBuilder.successor(of: Array("a/".utf8)) == Array("a0".utf8))
        #expect(ListPageBuilder.successor(of: [0x61, 0xFF]) == [0x62])
        #expect(ListPageBuilder.successor(of: [0xFF]) == nil)
        #expect(ListPageBuilder.successor(of: []) == nil)
    }
}
