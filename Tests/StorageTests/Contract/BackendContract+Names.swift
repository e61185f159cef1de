import PortcullisCore
import Storage
import Testing

/// Contract checks for the object-name policy (`ObjectPath`): every backend stores, reads, lists (at every page
/// boundary) and deletes every name the policy admits, byte for byte.
extension String {
    fileprivate init(format2 value: Int) { self = value < 10 ? "0\(value)" : "\(value)" }
}

extension BackendContract {
    /// Names the policy admits that trip naive implementations: every ASCII control character it admits (all
    /// but NUL, LF, CR) and DEL, C1 controls, the noncharacters U+FFFE/U+FFFF (XML 1.0 forbids them and most C0
    /// controls), astral characters, combining marks right after a `/` (one grapheme cluster with it), names
    /// whose last UTF-8 byte is a continuation byte 0x80 (a byte-wise predecessor is not UTF-8), canonically
    /// equivalent spellings (different objects), and 1024-byte names.
    static let policyNames: [String] = {
        var names = (0x01...0x1F).filter { $0 != 0x0A && $0 != 0x0D }.map {
            "ctl/\(Character(Unicode.Scalar($0)!))-\($0)"
        }
        names += [
            "ctl/\u{7F}", "ctl/\u{1}\u{2}\u{1F}\u{7F}", "c1/\u{80}", "c1/\u{85}", "c1/\u{9F}",
            "nc/\u{FFFE}", "nc/\u{FFFF}", "nc/\u{FFFE}\u{FFFF}x", "astral/\u{1F600}", "astral/\u{10FFFF}",
            "astral/\u{20000}\u{1F600}",
            "mark/\u{301}", "mark/\u{301}x", "mark/a\u{301}",
            "pair/caf\u{E9}", "pair/cafe\u{301}", "pair/K", "pair/\u{212A}", "pair/\u{C5}", "pair/A\u{30A}",
            "pair/\u{212B}",
            "cont/\u{100}", "cont/\u{100}1", "cont/\u{100}\u{100}", "cont/\u{500}",
            String(repeating: "n", count: 1024), String(repeating: "n", count: 1020) + "\u{1F600}",
            String(repeating: "\u{1}", count: 1023) + "z",
        ]
        return names
    }()

    func policyNamesRoundTrip() async throws {
        let names = Self.policyNames
        #expect(Set(names.map { ExactString($0) }).count == names.count)
        #expect(names.filter { $0.utf8.count == 1024 }.count == 3)
        for (index, name) in names.enumerated() {
            let meta = try await put(name, Array("#\(index)".utf8))
            #expect(meta.name.bytesEqual(name), "\(Array(name.utf8))")
        }
        for (index, name) in names.enumerated() {
            #expect(try await get(name).1 == Array("#\(index)".utf8), "\(Array(name.utf8))")
            #expect(try await backend.metadata(of: path(name)).name.bytesEqual(name), "\(Array(name.utf8))")
        }
        let sorted = names.sorted(by: Self.byteOrder)
        for pageSize in [1000, 7, 1] {
            let flat = try await listAll(prefix: "", delimiter: nil, pageSize: pageSize)
            #expect(flat.items.bytesEqual(sorted), "page size \(pageSize): \(flat.items.map { Array($0.utf8) })")
        }
        let folders = try await listAll(prefix: "", delimiter: "/", pageSize: 3)
        #expect(
            folders.items.bytesEqual(names.filter { !$0.utf8.contains(UInt8(ascii: "/")) }.sorted(by: Self.byteOrder)))
        #expect(folders.prefixes.bytesEqual(["astral/", "c1/", "cont/", "ctl/", "mark/", "nc/", "pair/"]))
        for folder in ["mark/", "pair/", "cont/", "ctl/", "nc/"] {
            let listed = try await listAll(prefix: folder, delimiter: "/", pageSize: 2)
            #expect(listed.items.bytesEqual(sorted.filter { $0.bytesHasPrefix(folder) }), "\(folder)")
        }

        // Canonically equivalent names are different objects: deleting one leaves the others.
        try await backend.delete(path("pair/cafe\u{301}"), preconditions: .none)
        try await backend.delete(path("pair/\u{212A}"), preconditions: .none)
        try await expectNotFound("pair/cafe\u{301}")
        #expect(
            try await get("pair/caf\u{E9}").1 == Array("#\(names.firstIndex { $0.bytesEqual("pair/caf\u{E9}") }!)".utf8)
        )
        #expect(try await get("pair/K").1 == Array("#\(names.firstIndex { $0.bytesEqual("pair/K") }!)".utf8))
        let pairs = try await listAll(prefix: "pair/", delimiter: nil, pageSize: 1000)
        #expect(pairs.items.bytesEqual(["pair/A\u{30A}", "pair/K", "pair/caf\u{E9}", "pair/\u{C5}", "pair/\u{212B}"]))

        for name in names where !name.bytesEqual("pair/cafe\u{301}") && !name.bytesEqual("pair/\u{212A}") {
            try await backend.delete(path(name), preconditions: .none)
        }
        #expect(try await listAll(prefix: "", delimiter: nil, pageSize: 1000).items.isEmpty)
    }

    /// A long run of names that share a control character right after the prefix, listed one entry per page:
    /// an upstream cursor that must restart below such a name (S3's `start-after` cannot carry it on every
    /// server) still moves forward at every page. Each page must make progress, so the walk is capped.
    func listPagesThroughControlCharacterRuns() async throws {
        let names = (0..<40).map { "run/\u{1}\(String(format2: $0))" } + ["run/\u{1}\u{1}", "run/\u{2}", "run/z"]
        for name in names { try await put(name, [1]) }
        let sorted = names.sorted(by: Self.byteOrder)
        for pageSize in [1, 2] {
            var listed = [String]()
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await backend.list(
                    ListRequest(
                        bucket: bucket, prefix: "run/", delimiter: "/",
                        maxResults: pageSize, cursor: cursor))
                listed += page.items
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages <= names.count + 2
            #expect(listed.bytesEqual(sorted), "page size \(pageSize): \(listed.map { Array($0.utf8) })")
        }
    }

    /// Custom-metadata keys are byte strings. An object cannot hold two canonically equivalent keys (the model's
    /// map is String-keyed), so setting one spelling replaces the other, and removing one spelling leaves the
    /// other alone.
    func metadataKeysAreBytes() async throws {
        try await put("m", [1], attributes: ObjectAttributes(customMetadata: ["caf\u{E9}": "old", "K": "k"]))
        var remove = MetadataPatch()
        remove.customMetadata = ["cafe\u{301}": nil, "\u{212A}": nil]
        let kept = try await backend.updateMetadata(path("m"), patch: remove, preconditions: .none)
        #expect(kept.customMetadata.bytesEqual(["caf\u{E9}": "old", "K": "k"]), "\(kept.customMetadata)")
        var replace = MetadataPatch()
        replace.customMetadata = ["cafe\u{301}": "new"]
        let replaced = try await backend.updateMetadata(path("m"), patch: replace, preconditions: .none)
        #expect(replaced.customMetadata.bytesEqual(["cafe\u{301}": "new", "K": "k"]), "\(replaced.customMetadata)")
        let stored = try await backend.metadata(of: path("m")).customMetadata
        #expect(
            stored.bytesEqual(["cafe\u{301}": "new", "K": "k"]), "\(stored.map { (Array($0.key.utf8), $0.value) })")
    }

    /// A resumable upload belongs to the exact name it was started for, not to a canonically equivalent one.
    func resumableHandleBoundToExactName() async throws {
        let staging = try requireStaging()
        let owner = try path("up/caf\u{E9}"), twin = try path("up/cafe\u{301}")
        let handle = try await staging.startUpload(owner, attributes: ObjectAttributes(), declaredSize: 3)
        for attempt in 0..<3 {
            do {
                switch attempt {
                case 0:
                    _ = try await staging.appendChunk(
                        handle, object: twin, offset: 0, body: BufferByteStream([9, 9, 9]))
                case 1: _ = try await staging.stagedSize(handle, object: twin)
                default:
                    _ = try await staging.finalizeUpload(
                        handle, object: twin, attributes: ObjectAttributes(),
                        options: WriteOptions())
                }
                Issue.record("attempt \(attempt): a handle for \(owner) was accepted for \(twin)")
            } catch {
                #expect(error.isNotFound, "attempt \(attempt): \(error)")
            }
        }
        try await expectNotFound("up/cafe\u{301}")
        #expect(
            try await staging.appendChunk(handle, object: owner, offset: 0, body: BufferByteStream([1, 2, 3])) == 3)
        _ = try await staging.finalizeUpload(
            handle, object: owner, attributes: ObjectAttributes(), options: WriteOptions())
        #expect(try await get("up/caf\u{E9}").1 == [1, 2, 3])
        try await expectNotFound("up/cafe\u{301}")
    }
}
