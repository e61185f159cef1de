import PortcullisCore
import Storage
import Testing

/// Contract checks for single-object operations: metadata, reads, overwrites, patches, preconditions, deletes,
/// writes that must leave nothing behind, and names that are not paths.
extension BackendContract {
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
        for unsatisfiable in [
            ByteRangeSpec.fromTo(first: 1000, last: nil), .fromTo(first: 2000, last: 3000), .suffix(count: 0),
        ] {
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
        // As the JS SDK's getBytes needs: `bytes=0-N` on an empty object serves the (empty) object, not 416.
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
        let updated = try await backend.updateMetadata(
            path("o"),
            patch: {
                var p = MetadataPatch(); p.cacheControl = .set("x"); return p
            }(),
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
        let original = try await put(
            "m", Array("x".utf8),
            attributes: ObjectAttributes(
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
            try await put(
                "p", [3], options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: created.generation + 1))
            )
            Issue.record("a wrong ifGenerationMatch must fail")
        } catch let error as StorageError {
            #expect(error.isPreconditionFailed)
        }
        #expect(try await get("p").1 == [1])
        let second = try await put(
            "p", [4], options: WriteOptions(preconditions: Preconditions(ifGenerationMatch: created.generation)))
        #expect(try await get("p").1 == [4])
        do {
            _ = try await backend.updateMetadata(
                path("p"), patch: MetadataPatch(),
                preconditions: Preconditions(ifMetagenerationMatch: 2))
            Issue.record("a wrong ifMetagenerationMatch must fail")
        } catch {
            #expect(error.isPreconditionFailed)
        }
        let patched = try await backend.updateMetadata(
            path("p"), patch: MetadataPatch(),
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
        try await backend.delete(
            path("p"),
            preconditions: Preconditions(
                ifGenerationMatch: second.generation,
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
        let page = try await backend.list(
            ListRequest(bucket: bucket, prefix: "", delimiter: nil, maxResults: 10, cursor: nil))
        #expect(page.items.isEmpty)
        let again = try await put("d", [9])
        #expect(again.metageneration == 1)
        #expect(try await get("d").1 == [9])
    }

    // MARK: - Failed writes leave nothing

    func expectedMD5Mismatch() async throws {
        try await put("md5", Array("old".utf8))
        do {
            try await put("md5", Array("new".utf8), options: WriteOptions(expectedMD5: "XrY7u+Ae7tCTyyK7j1rNww=="))
            Issue.record("a wrong MD5 must fail")
        } catch let error as StorageError {
            guard case .checksumMismatch(.md5, let expected, let actual)? = asStorageError(error) else {
                Issue.record("got \(error)"); return
            }
            #expect(expected == "XrY7u+Ae7tCTyyK7j1rNww==")
            #expect(actual == md5Base64(Array("new".utf8)))
        }
        #expect(try await get("md5").1 == Array("old".utf8))
        do {
            try await put("md5-new", [1, 2], options: WriteOptions(expectedMD5: "AAAAAAAAAAAAAAAAAAAAAA=="))
            Issue.record("a wrong MD5 must fail")
        } catch {}
        try await expectNotFound("md5-new")
        let ok = try await put(
            "md5-ok", Array("hello world".utf8), options: WriteOptions(expectedMD5: "XrY7u+Ae7tCTyyK7j1rNww=="))
        #expect(ok.size == 11)
    }

    func expectedSizeMismatch() async throws {
        for (declared, actual) in [(Int64(5), 10), (Int64(20), 10)] {
            do {
                try await put("size", testBytes(actual, seed: 3), options: WriteOptions(expectedSize: declared))
                Issue.record("declared \(declared) for \(actual) bytes must fail")
            } catch let error as StorageError {
                guard case .sizeMismatch(let expected, _)? = asStorageError(error) else {
                    Issue.record("got \(error)"); continue
                }
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
            try await put(
                "bc", Array("new bytes".utf8), attributes: ObjectAttributes(contentType: "text/plain"),
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
            _ = try await backend.write(
                path("bf"), body: FailingByteStream(prefix: testBytes(3 << 20, seed: 4)),
                attributes: ObjectAttributes(), options: WriteOptions())
            Issue.record("a failing body must fail the write")
        } catch {
            guard case .bodyFailed? = asStorageError(error) else { Issue.record("got \(error)"); return }
        }
        #expect(try await get("bf").1 == Array("old".utf8))
        do {
            _ = try await backend.write(
                path("bf-new"), body: FailingByteStream(prefix: [1, 2, 3]),
                attributes: ObjectAttributes(), options: WriteOptions())
        } catch {}
        try await expectNotFound("bf-new")
    }

    func unusualNames() async throws {
        // (GCS refuses the exact names "." and ".."; the embedded suite checks those separately.)
        let names = [
            "../x", "a/../b", "b", "%2e%2e", "%2e%2e/%2f", "a//b", "./a", "/leading", "..a", "a/./b",
            "ünïcødé/名前/😀", "space name?#&=+", String(repeating: "é", count: 511) + "x",
            String(repeating: "n", count: 1024),
        ]
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
}
