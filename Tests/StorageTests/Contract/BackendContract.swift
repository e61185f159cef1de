import PortcullisCore
import Storage
import Synchronization
import Testing

/// The behaviour every `StorageBackend` (and `ResumableStaging`) must show, as reusable async checks.
///
/// Each check takes a backend serving an EMPTY bucket `bucket` and throws or records an `#expect` failure when
/// the backend breaks the contract. Run them one per fresh bucket (`Check.allCases`); the embedded suite is
/// `EmbeddedContractTests`, and GCS/S3 suites call the same checks against their backends.
struct BackendContract: Sendable {
    let backend: any StorageBackend
    let staging: (any ResumableStaging)?
    let bucket: String

    init(backend: any StorageBackend, staging: (any ResumableStaging)? = nil, bucket: String) {
        self.backend = backend
        self.staging = staging
        self.bucket = bucket
    }

    /// Every check, by name (use as `@Test(arguments: BackendContract.Check.allCases)`).
    enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case metadataRoundtrip, readRanges, overwriteCreatesNewGeneration, oldGenerationReaderKeepsReading
        case updateMetadataMerge, preconditions, deleteAndNotFound
        case listDelimiterAndPrefixes, listInvalidNamesFiltered, listPagination, listCursorResume
        case expectedMD5Mismatch, expectedSizeMismatch, beforeCommitRejects, bodyFailureMidway, unusualNames
        case resumableLifecycle, resumableOffsetMismatch, resumableCancel, resumableSizeMismatch

        var testDescription: String { rawValue }

        /// Whether the check needs `ResumableStaging`.
        var needsStaging: Bool { rawValue.hasPrefix("resumable") }
    }

    func run(_ check: Check) async throws {
        switch check {
        case .metadataRoundtrip: try await metadataRoundtrip()
        case .readRanges: try await readRanges()
        case .overwriteCreatesNewGeneration: try await overwriteCreatesNewGeneration()
        case .oldGenerationReaderKeepsReading: try await oldGenerationReaderKeepsReading()
        case .updateMetadataMerge: try await updateMetadataMerge()
        case .preconditions: try await preconditions()
        case .deleteAndNotFound: try await deleteAndNotFound()
        case .listDelimiterAndPrefixes: try await listDelimiterAndPrefixes()
        case .listInvalidNamesFiltered: try await listInvalidNamesFiltered()
        case .listPagination: try await listPagination()
        case .listCursorResume: try await listCursorResume()
        case .expectedMD5Mismatch: try await expectedMD5Mismatch()
        case .expectedSizeMismatch: try await expectedSizeMismatch()
        case .beforeCommitRejects: try await beforeCommitRejects()
        case .bodyFailureMidway: try await bodyFailureMidway()
        case .unusualNames: try await unusualNames()
        case .resumableLifecycle: try await resumableLifecycle()
        case .resumableOffsetMismatch: try await resumableOffsetMismatch()
        case .resumableCancel: try await resumableCancel()
        case .resumableSizeMismatch: try await resumableSizeMismatch()
        }
    }

    // MARK: - Helpers

    func path(_ name: String) throws -> ObjectPath { try ObjectPath(bucket: bucket, name: name) }

    @discardableResult
    func put(_ name: String, _ bytes: [UInt8], attributes: ObjectAttributes = ObjectAttributes(),
             options: WriteOptions = WriteOptions()) async throws -> ObjectMetadata {
        try await backend.write(path(name), body: BufferByteStream(bytes), attributes: attributes, options: options)
    }

    func get(_ name: String, range: ByteRangeSpec? = nil) async throws -> (ObjectRead, [UInt8]) {
        let read = try await backend.read(path(name), range: range)
        return (read, try await readAll(read.body))
    }

    func expectNotFound(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        do {
            _ = try await backend.metadata(of: path(name))
            Issue.record("\(name) should not exist", sourceLocation: sourceLocation)
        } catch {
            #expect(error.isNotFound, "expected notFound, got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// Every entry of a listing, page by page, checking each page's size bound.
    func listAll(prefix: String, delimiter: String?, pageSize: Int) async throws -> (items: [String], prefixes: [String], order: [String]) {
        var items = [String](), prefixes = [String](), order = [String]()
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await backend.list(ListRequest(bucket: bucket, prefix: prefix, delimiter: delimiter,
                                                          maxResults: pageSize, cursor: cursor))
            #expect(page.items.count + page.prefixes.count <= pageSize)
            items += page.items
            prefixes += page.prefixes
            order += (page.items + page.prefixes).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            cursor = page.nextCursor
            pages += 1
            if pages > 100_000 { Issue.record("listing does not terminate"); break }
        } while cursor != nil
        return (items, prefixes, order)
    }

    static func byteOrder(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    // MARK: - Metadata and reads

    func metadataRoundtrip() async throws {
        let attributes = ObjectAttributes(
            contentType: "text/plain", contentEncoding: "identity", contentDisposition: "inline",
            contentLanguage: "en", cacheControl: "max-age=60", customMetadata: ["owner": "u123", "empty": ""],
            downloadTokens: ["tok-1"])
        let written = try await put("notes/hello.txt", Array("hello world".utf8), attributes: attributes)
        #expect(written.bucket == bucket)
        #expect(written.name == "notes/hello.txt")
        #expect(written.size == 11)
        #expect(written.md5Hash == "XrY7u+Ae7tCTyyK7j1rNww==")
        #expect(written.crc32c == "yZRlqg==")
        #expect(written.metageneration == 1)
        #expect(written.generation > 0)
        #expect(written.contentType == "text/plain")
        #expect(written.contentDisposition == "inline")
        #expect(written.contentLanguage == "en")
        #expect(written.cacheControl == "max-age=60")
        #expect(written.customMetadata == ["owner": "u123", "empty": ""])
        #expect(written.downloadTokens == ["tok-1"])
        let read = try await backend.metadata(of: path("notes/hello.txt"))
        #expect(read == written)
        let (object, bytes) = try await get("notes/hello.txt")
        #expect(bytes == Array("hello world".utf8))
        #expect(object.range == nil)
        #expect(object.metadata == written)
        let empty = try await put("empty", [])
        #expect(empty.size == 0)
        #expect(empty.md5Hash == "1B2M2Y8AsgTpgAmY7PhCfg==")
        #expect(empty.crc32c == "AAAAAA==")
    }

    func readRanges() async throws {
        let bytes = testBytes(1000, seed: 7)
        try await put("r", bytes)
        let (first, firstBytes) = try await get("r", range: .fromTo(first: 10, last: 19))
        #expect(first.range == ResolvedRange(offset: 10, length: 10))
        #expect(firstBytes == Array(bytes[10..<20]))
        let (open, openBytes) = try await get("r", range: .fromTo(first: 990, last: nil))
        #expect(open.range == ResolvedRange(offset: 990, length: 10))
        #expect(openBytes == Array(bytes[990...]))
        let (clamped, clampedBytes) = try await get("r", range: .fromTo(first: 995, last: 5000))
        #expect(clamped.range == ResolvedRange(offset: 995, length: 5))
        #expect(clampedBytes == Array(bytes[995...]))
        let (suffix, suffixBytes) = try await get("r", range: .suffix(count: 3))
        #expect(suffix.range == ResolvedRange(offset: 997, length: 3))
        #expect(suffixBytes == Array(bytes[997...]))
        let (all, allBytes) = try await get("r", range: .suffix(count: 5000))
        #expect(all.range == ResolvedRange(offset: 0, length: 1000))
        #expect(allBytes == bytes)
        for unsatisfiable in [ByteRangeSpec.fromTo(first: 1000, last: nil), .fromTo(first: 2000, last: 3000), .suffix(count: 0)] {
            await #expect(throws: StorageError.self) { _ = try await backend.read(path("r"), range: unsatisfiable) }
            do {
                _ = try await backend.read(path("r"), range: unsatisfiable)
            } catch {
                guard case .rangeNotSatisfiable(let size)? = asStorageError(error) else {
                    Issue.record("expected rangeNotSatisfiable, got \(error)")
                    continue
                }
                #expect(size == 1000)
            }
        }
        // v0 §5.2: `bytes=0-N` on an empty object serves the (empty) object, not 416.
        try await put("zero", [])
        let (zero, zeroBytes) = try await get("zero", range: .fromTo(first: 0, last: 99))
        #expect(zero.range == nil)
        #expect(zeroBytes.isEmpty)
        do {
            _ = try await backend.read(path("zero"), range: .fromTo(first: 5, last: nil))
            Issue.record("bytes=5- on an empty object must be unsatisfiable")
        } catch {
            guard case .rangeNotSatisfiable(0)? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        do {
            _ = try await backend.read(path("missing"), range: nil)
            Issue.record("missing object must be notFound")
        } catch {
            #expect(error.isNotFound)
        }
    }

    func overwriteCreatesNewGeneration() async throws {
        let first = try await put("o", Array("one".utf8), attributes: ObjectAttributes(downloadTokens: ["a"]))
        let updated = try await backend.updateMetadata(path("o"), patch: { var p = MetadataPatch(); p.cacheControl = .set("x"); return p }(),
                                                       preconditions: .none)
        #expect(updated.metageneration == 2)
        let second = try await put("o", Array("two!".utf8), attributes: ObjectAttributes(downloadTokens: ["b"]))
        #expect(second.generation > first.generation)
        #expect(second.metageneration == 1)
        #expect(second.cacheControl == nil)
        #expect(second.downloadTokens == ["b"])
        #expect(second.size == 4)
        let (read, bytes) = try await get("o")
        #expect(bytes == Array("two!".utf8))
        #expect(read.metadata.generation == second.generation)
        var last = second.generation
        for i in 0..<5 {
            let next = try await put("o", [UInt8(i)])
            #expect(next.generation > last)
            last = next.generation
        }
    }

    func oldGenerationReaderKeepsReading() async throws {
        let old = testBytes(300_000, seed: 1)
        try await put("keep", old)
        let reader = try await backend.read(path("keep"), range: nil)
        try await put("keep", testBytes(1000, seed: 2))
        #expect(try await readAll(reader.body) == old)
        let secondReader = try await backend.read(path("keep"), range: .fromTo(first: 100, last: 199))
        try await backend.delete(path("keep"), preconditions: .none)
        #expect(try await readAll(secondReader.body) == Array(testBytes(1000, seed: 2)[100..<200]))
    }

    func updateMetadataMerge() async throws {
        let original = try await put("m", Array("x".utf8), attributes: ObjectAttributes(
            contentType: "text/plain", contentLanguage: "en", cacheControl: "no-cache",
            customMetadata: ["keep": "1", "change": "old", "drop": "bye"], downloadTokens: ["t1", "t2"]))
        var patch = MetadataPatch()
        patch.contentType = .set("application/json")
        patch.contentLanguage = .remove
        patch.customMetadata = ["change": "new", "drop": nil, "add": "yes"]
        patch.addDownloadTokens = ["t3", "t1"]
        patch.removeDownloadTokens = ["t2"]
        let updated = try await backend.updateMetadata(path("m"), patch: patch, preconditions: .none)
        #expect(updated.generation == original.generation)
        #expect(updated.metageneration == 2)
        #expect(updated.updated >= original.updated)
        #expect(updated.timeCreated == original.timeCreated)
        #expect(updated.contentType == "application/json")
        #expect(updated.contentLanguage == nil)
        #expect(updated.cacheControl == "no-cache")
        #expect(updated.customMetadata == ["keep": "1", "change": "new", "add": "yes"])
        #expect(updated.downloadTokens == ["t1", "t3"])
        #expect(updated.md5Hash == original.md5Hash)
        #expect(updated.size == original.size)
        #expect(try await backend.metadata(of: path("m")) == updated)
        var clear = MetadataPatch()
        clear.clearCustomMetadata = true
        clear.customMetadata = ["only": "this"]
        let cleared = try await backend.updateMetadata(path("m"), patch: clear, preconditions: .none)
        #expect(cleared.customMetadata == ["only": "this"])
        #expect(cleared.metageneration == 3)
        let unchanged = try await backend.updateMetadata(path("m"), patch: MetadataPatch(), preconditions: .none)
        #expect(unchanged.metageneration == 4)
        #expect(try await get("m").1 == Array("x".utf8))
        do {
            _ = try await backend.updateMetadata(path("absent"), patch: MetadataPatch(), preconditions: .none)
            Issue.record("patching a missing object must be notFound")
        } catch {
            #expect(error.isNotFound)
        }
    }

    func preconditions() async throws {
        let created = try await put("p", [1], options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: 0)))
        do {
            try await put("p", [2], options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: 0)))
            Issue.record("ifGenerationMatch=0 on an existing object must fail")
        } catch let error as StorageError {
            #expect(error.isPreconditionFailed)
        }
        do {
            try await put("p", [3], options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: created.generation + 1)))
            Issue.record("a wrong ifGenerationMatch must fail")
        } catch let error as StorageError {
            #expect(error.isPreconditionFailed)
        }
        #expect(try await get("p").1 == [1])
        let second = try await put("p", [4], options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: created.generation)))
        #expect(try await get("p").1 == [4])
        do {
            _ = try await backend.updateMetadata(path("p"), patch: MetadataPatch(),
                                                 preconditions: Preconditions(ifMetagenerationMatch: 2))
            Issue.record("a wrong ifMetagenerationMatch must fail")
        } catch {
            #expect(error.isPreconditionFailed)
        }
        let patched = try await backend.updateMetadata(path("p"), patch: MetadataPatch(),
                                                       preconditions: Preconditions(ifMetagenerationMatch: 1))
        #expect(patched.metageneration == 2)
        do {
            try await backend.delete(path("p"), preconditions: Preconditions(ifGenerationMatch: created.generation))
            Issue.record("delete with a stale generation must fail")
        } catch {
            #expect(error.isPreconditionFailed)
        }
        do {
            try await put("absent", [1], options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: 42)))
            Issue.record("ifGenerationMatch on a missing object must fail")
        } catch let error as StorageError {
            #expect(error.isPreconditionFailed)
        }
        try await expectNotFound("absent")
        try await backend.delete(path("p"), preconditions: Preconditions(ifGenerationMatch: second.generation,
                                                                          ifMetagenerationMatch: 2))
        try await expectNotFound("p")
    }

    func deleteAndNotFound() async throws {
        try await put("d", [1, 2, 3])
        try await backend.delete(path("d"), preconditions: .none)
        try await expectNotFound("d")
        do {
            try await backend.delete(path("d"), preconditions: .none)
            Issue.record("deleting a missing object must be notFound")
        } catch {
            #expect(error.isNotFound)
        }
        let page = try await backend.list(ListRequest(bucket: bucket, prefix: "", delimiter: nil, maxResults: 10, cursor: nil))
        #expect(page.items.isEmpty)
        let again = try await put("d", [9])
        #expect(again.metageneration == 1)
        #expect(try await get("d").1 == [9])
    }

    // MARK: - List

    func listDelimiterAndPrefixes() async throws {
        for name in ["photos/cover.png", "photos/2024/a.png", "photos/2024/b.png", "photos/2025/c.png",
                     "photos/2025/deep/d.png", "photos.txt", "other/x", "top"] {
            try await put(name, Array(name.utf8))
        }
        let root = try await backend.list(ListRequest(bucket: bucket, prefix: "", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(root.items == ["photos.txt", "top"])
        #expect(root.prefixes == ["other/", "photos/"])
        #expect(root.nextCursor == nil)
        let photos = try await backend.list(ListRequest(bucket: bucket, prefix: "photos/", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(photos.items == ["photos/cover.png"])
        #expect(photos.prefixes == ["photos/2024/", "photos/2025/"])
        let flat = try await backend.list(ListRequest(bucket: bucket, prefix: "photos/", delimiter: nil, maxResults: 1000, cursor: nil))
        #expect(flat.items == ["photos/2024/a.png", "photos/2024/b.png", "photos/2025/c.png", "photos/2025/deep/d.png", "photos/cover.png"])
        #expect(flat.prefixes.isEmpty)
        // maxResults counts items and prefixes together, and each prefix appears once across pages.
        let (items, prefixes, order) = try await listAll(prefix: "photos/", delimiter: "/", pageSize: 1)
        #expect(items == ["photos/cover.png"])
        #expect(prefixes == ["photos/2024/", "photos/2025/"])
        #expect(order == ["photos/2024/", "photos/2025/", "photos/cover.png"])
        let empty = try await backend.list(ListRequest(bucket: bucket, prefix: "nothing/", delimiter: "/", maxResults: 5, cursor: nil))
        #expect(empty.items.isEmpty && empty.prefixes.isEmpty && empty.nextCursor == nil)
    }

    func listInvalidNamesFiltered() async throws {
        for name in ["listAll/abc/", "listAll//foo", "listAll/bar//", "listAll/baz//qux", "listAll/ok", "listAll/z/"] {
            try await put(name, [1])
        }
        let page = try await backend.list(ListRequest(bucket: bucket, prefix: "listAll/", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(page.items == ["listAll/ok"])
        #expect(page.prefixes == ["listAll/abc/", "listAll/bar/", "listAll/baz/", "listAll/z/"])
        let placeholder = try await backend.list(ListRequest(bucket: bucket, prefix: "listAll/abc/", delimiter: "/", maxResults: 1000, cursor: nil))
        #expect(placeholder.items.isEmpty && placeholder.prefixes.isEmpty)
        let flat = try await backend.list(ListRequest(bucket: bucket, prefix: "listAll/", delimiter: nil, maxResults: 1000, cursor: nil))
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
        for i in 0..<2000 { names.append("pg/n\(String(i + 10_000).dropFirst())") }
        for folder in 0..<100 {
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
        let expectedPrefixes = (0..<100).map { "pg/f\(String($0 + 1000).dropFirst())/" }
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
        let first = try await backend.list(ListRequest(bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 2, cursor: nil))
        #expect(first.items == ["c/a", "c/b"])
        let cursor = try #require(first.nextCursor)
        // Written after the cursor position: visible; before it: not (resume is strictly after the last key).
        try await put("c/c", [1])
        try await put("c/aa", [1])
        let second = try await backend.list(ListRequest(bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 3, cursor: cursor))
        #expect(second.items == ["c/c", "c/d"])
        #expect(second.prefixes == ["c/e/"])
        let third = try await backend.list(ListRequest(bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 3,
                                                       cursor: second.nextCursor))
        #expect(third.items == ["c/f"])
        #expect(third.prefixes.isEmpty)
        #expect(third.nextCursor == nil)
        // The same cursor replayed gives the same page (cursors are positions, not sessions).
        let replay = try await backend.list(ListRequest(bucket: bucket, prefix: "c/", delimiter: "/", maxResults: 3, cursor: cursor))
        #expect(replay == second)
    }

    // MARK: - Failed writes leave nothing

    func expectedMD5Mismatch() async throws {
        try await put("md5", Array("old".utf8))
        do {
            try await put("md5", Array("new".utf8), options: WriteOptions(expectedMD5: "XrY7u+Ae7tCTyyK7j1rNww=="))
            Issue.record("a wrong MD5 must fail")
        } catch let error as StorageError {
            guard case .checksumMismatch(let expected, let actual)? = asStorageError(error) else { Issue.record("got \(error)"); return }
            #expect(expected == "XrY7u+Ae7tCTyyK7j1rNww==")
            #expect(actual == md5Base64(Array("new".utf8)))
        }
        #expect(try await get("md5").1 == Array("old".utf8))
        do {
            try await put("md5-new", [1, 2], options: WriteOptions(expectedMD5: "AAAAAAAAAAAAAAAAAAAAAA=="))
            Issue.record("a wrong MD5 must fail")
        } catch {}
        try await expectNotFound("md5-new")
        let ok = try await put("md5-ok", Array("hello world".utf8), options: WriteOptions(expectedMD5: "XrY7u+Ae7tCTyyK7j1rNww=="))
        #expect(ok.size == 11)
    }

    func expectedSizeMismatch() async throws {
        for (declared, actual) in [(Int64(5), 10), (Int64(20), 10)] {
            do {
                try await put("size", testBytes(actual, seed: 3), options: WriteOptions(expectedSize: declared))
                Issue.record("declared \(declared) for \(actual) bytes must fail")
            } catch let error as StorageError {
                guard case .sizeMismatch(let expected, _)? = asStorageError(error) else { Issue.record("got \(error)"); continue }
                #expect(expected == declared)
            }
            try await expectNotFound("size")
        }
        let ok = try await put("size", testBytes(10, seed: 3), options: WriteOptions(expectedSize: 10))
        #expect(ok.size == 10)
    }

    func beforeCommitRejects() async throws {
        struct Denied: Error {}
        try await put("bc", Array("old".utf8))
        let seen = SeenMetadata()
        do {
            try await put("bc", Array("new bytes".utf8), attributes: ObjectAttributes(contentType: "text/plain"),
                          options: WriteOptions(beforeCommit: { metadata in
                              seen.set(metadata)
                              throw Denied()
                          }))
            Issue.record("a throwing beforeCommit must fail the write")
        } catch let error as StorageError {
            guard case .rejected(let inner)? = asStorageError(error) else { Issue.record("got \(error)"); return }
            #expect(inner is Denied)
        }
        let proposed = try #require(seen.value)
        #expect(proposed.size == 9)
        #expect(proposed.name == "bc")
        #expect(proposed.contentType == "text/plain")
        #expect(proposed.md5Hash == md5Base64(Array("new bytes".utf8)))
        #expect(try await get("bc").1 == Array("old".utf8))
        do {
            try await put("bc-new", [1], options: WriteOptions(beforeCommit: { _ in throw Denied() }))
        } catch {}
        try await expectNotFound("bc-new")
        let allowed = try await put("bc", [7], options: WriteOptions(beforeCommit: { seen.set($0) }))
        #expect(seen.value?.generation == allowed.generation)
    }

    func bodyFailureMidway() async throws {
        try await put("bf", Array("old".utf8))
        do {
            _ = try await backend.write(path("bf"), body: FailingByteStream(prefix: testBytes(3 << 20, seed: 4)),
                                        attributes: ObjectAttributes(), options: WriteOptions())
            Issue.record("a failing body must fail the write")
        } catch {
            guard case .bodyFailed? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        #expect(try await get("bf").1 == Array("old".utf8))
        do {
            _ = try await backend.write(path("bf-new"), body: FailingByteStream(prefix: [1, 2, 3]),
                                        attributes: ObjectAttributes(), options: WriteOptions())
        } catch {}
        try await expectNotFound("bf-new")
    }

    func unusualNames() async throws {
        // (GCS refuses the exact names "." and ".."; the embedded suite checks those separately.)
        let names = ["../x", "a/../b", "b", "%2e%2e", "%2e%2e/%2f", "a//b", "./a", "/leading", "..a", "a/./b",
                     "ünïcødé/名前/😀", "space name?#&=+", String(repeating: "é", count: 511) + "x",
                     String(repeating: "n", count: 1024)]
        #expect(names.last!.utf8.count == 1024)
        #expect(names[names.count - 2].utf8.count == 1023)
        for (index, name) in names.enumerated() {
            let meta = try await put(name, Array("#\(index)".utf8))
            #expect(meta.name == name)
        }
        for (index, name) in names.enumerated() {
            #expect(try await get(name).1 == Array("#\(index)".utf8), "\(name)")
            #expect(try await backend.metadata(of: path(name)).name == name)
        }
        let all = try await listAll(prefix: "", delimiter: nil, pageSize: 1000)
        // Names with an empty segment or a trailing slash are hidden from listings, nothing else.
        let visible = names.filter { name in
            !name.hasPrefix("/") && !name.hasSuffix("/") && !name.contains("//")
        }.sorted(by: Self.byteOrder)
        #expect(all.items == visible)
        try await backend.delete(path("a/../b"), preconditions: .none)
        #expect(try await get("b").1 == Array("#2".utf8))
    }

    // MARK: - Resumable

    func requireStaging() throws -> any ResumableStaging {
        try #require(staging, "this backend does not offer resumable staging")
    }

    func resumableLifecycle() async throws {
        let staging = try requireStaging()
        let body = testBytes(600_000, seed: 9)
        let attributes = ObjectAttributes(contentType: "application/octet-stream", customMetadata: ["k": "v"],
                                          downloadTokens: ["r1"])
        let handle = try await staging.startUpload(path("big/file.bin"), attributes: attributes, declaredSize: Int64(body.count))
        #expect(try await staging.stagedSize(handle, object: path("big/file.bin")) == 0)
        #expect(try await staging.uploadState(handle, object: path("big/file.bin")) == .active(stagedSize: 0))
        var offset: Int64 = 0
        for chunk in [0..<262_144, 262_144..<524_288, 524_288..<600_000] {
            let size = try await staging.appendChunk(handle, object: path("big/file.bin"), offset: offset,
                                                     body: BufferByteStream(Array(body[chunk])))
            offset += Int64(chunk.count)
            #expect(size == offset)
            #expect(try await staging.stagedSize(handle, object: path("big/file.bin")) == offset)
        }
        try await expectNotFound("big/file.bin")
        let metadata = try await staging.finalizeUpload(handle, object: path("big/file.bin"), attributes: attributes,
                                                        options: WriteOptions(expectedMD5: md5Base64(body)))
        #expect(metadata.size == Int64(body.count))
        #expect(metadata.md5Hash == md5Base64(body))
        #expect(metadata.customMetadata == ["k": "v"])
        #expect(metadata.downloadTokens == ["r1"])
        #expect(try await get("big/file.bin").1 == body)
        if case .active = try await staging.uploadState(handle, object: path("big/file.bin")) {
            Issue.record("a finalized upload must not be active")
        }
        do {
            _ = try await staging.appendChunk(handle, object: path("big/file.bin"), offset: offset, body: BufferByteStream([1]))
            Issue.record("appending to a finalized upload must fail")
        } catch {}
        // The handle belongs to its object.
        let other = try await staging.startUpload(path("other"), attributes: ObjectAttributes(), declaredSize: nil)
        do {
            _ = try await staging.stagedSize(other, object: path("not-other"))
            Issue.record("a handle used for another object must be notFound")
        } catch {
            #expect(error.isNotFound)
        }
        do {
            _ = try await staging.stagedSize("0123456789abcdef0123456789abcdef", object: path("other"))
            Issue.record("an unknown handle must be notFound")
        } catch {
            #expect(error.isNotFound)
        }
        // An upload with no declared size and no bytes finalizes as an empty object.
        let empty = try await staging.finalizeUpload(other, object: path("other"), attributes: ObjectAttributes(),
                                                     options: WriteOptions())
        #expect(empty.size == 0)
    }

    func resumableOffsetMismatch() async throws {
        let staging = try requireStaging()
        let object = try path("off")
        let handle = try await staging.startUpload(object, attributes: ObjectAttributes(), declaredSize: nil)
        _ = try await staging.appendChunk(handle, object: object, offset: 0, body: BufferByteStream(testBytes(1000, seed: 1)))
        for wrong in [Int64(0), 999, 1001, 5000] {
            do {
                _ = try await staging.appendChunk(handle, object: object, offset: wrong, body: BufferByteStream([1, 2, 3]))
                Issue.record("offset \(wrong) must be refused")
            } catch {
                guard case .offsetMismatch(let current)? = asStorageError(error) else { Issue.record("got \(error)"); continue }
                #expect(current == 1000)
            }
        }
        #expect(try await staging.stagedSize(handle, object: object) == 1000)
        // A chunk whose body fails midway is not stored at all.
        do {
            _ = try await staging.appendChunk(handle, object: object, offset: 1000,
                                              body: FailingByteStream(prefix: testBytes(2 << 20, seed: 2)))
            Issue.record("a failing chunk body must fail")
        } catch {}
        #expect(try await staging.stagedSize(handle, object: object) == 1000)
        _ = try await staging.appendChunk(handle, object: object, offset: 1000, body: BufferByteStream(testBytes(24, seed: 5)))
        let metadata = try await staging.finalizeUpload(handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
        #expect(metadata.size == 1024)
        #expect(try await get("off").1 == testBytes(1000, seed: 1) + testBytes(24, seed: 5))
    }

    func resumableCancel() async throws {
        let staging = try requireStaging()
        let object = try path("cancel")
        let handle = try await staging.startUpload(object, attributes: ObjectAttributes(), declaredSize: 10)
        _ = try await staging.appendChunk(handle, object: object, offset: 0, body: BufferByteStream(testBytes(5, seed: 1)))
        try await staging.cancelUpload(handle, object: object)
        try await staging.cancelUpload(handle, object: object)
        #expect(try await staging.uploadState(handle, object: object) == .cancelled)
        do {
            _ = try await staging.finalizeUpload(handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
            Issue.record("finalizing a cancelled upload must fail")
        } catch {}
        do {
            _ = try await staging.appendChunk(handle, object: object, offset: 5, body: BufferByteStream([1]))
            Issue.record("appending to a cancelled upload must fail")
        } catch {}
        try await expectNotFound("cancel")
    }

    func resumableSizeMismatch() async throws {
        let staging = try requireStaging()
        let object = try path("short")
        let handle = try await staging.startUpload(object, attributes: ObjectAttributes(), declaredSize: 100)
        _ = try await staging.appendChunk(handle, object: object, offset: 0, body: BufferByteStream(testBytes(60, seed: 1)))
        do {
            _ = try await staging.finalizeUpload(handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
            Issue.record("finalizing short of the declared size must fail")
        } catch {
            guard case .sizeMismatch(100, 60)? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        try await expectNotFound("short")
        do {
            _ = try await staging.appendChunk(handle, object: object, offset: 60, body: BufferByteStream(testBytes(50, seed: 2)))
            Issue.record("a chunk past the declared size must fail")
        } catch {
            guard case .sizeMismatch? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        #expect(try await staging.stagedSize(handle, object: object) == 60)
        // Still active: the upload can be completed after the failed attempts.
        _ = try await staging.appendChunk(handle, object: object, offset: 60, body: BufferByteStream(testBytes(40, seed: 2)))
        do {
            _ = try await staging.finalizeUpload(handle, object: object, attributes: ObjectAttributes(),
                                                 options: WriteOptions(expectedMD5: "AAAAAAAAAAAAAAAAAAAAAA=="))
            Issue.record("a wrong MD5 at finalize must fail")
        } catch {}
        try await expectNotFound("short")
        let metadata = try await staging.finalizeUpload(handle, object: object, attributes: ObjectAttributes(), options: WriteOptions())
        #expect(metadata.size == 100)
    }
}

/// Captures what `beforeCommit` saw.
final class SeenMetadata: Sendable {
    private let stored = Mutex<ObjectMetadata?>(nil)
    var value: ObjectMetadata? { stored.withLock { $0 } }
    func set(_ metadata: ObjectMetadata) { stored.withLock { $0 = metadata } }
}
