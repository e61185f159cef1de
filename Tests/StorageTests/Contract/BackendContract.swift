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
    /// How many plain names and folders `listPagination` creates. Embedded: 2000 + 100. Upstream emulators answer
    /// each list call in ~20 ms and moto scans the whole bucket per call, so their suites pass `.upstream`
    /// (still more than one 1000-item upstream page, so the cursor has to cross an upstream page boundary).
    let paginationScale: PaginationScale

    struct PaginationScale: Sendable {
        let items: Int
        let folders: Int
        static let full = PaginationScale(items: 2000, folders: 100)
        static let upstream = PaginationScale(items: 1050, folders: 20)
    }

    init(
        backend: any StorageBackend, staging: (any ResumableStaging)? = nil, bucket: String,
        paginationScale: PaginationScale = .full
    ) {
        self.backend = backend
        self.staging = staging
        self.bucket = bucket
        self.paginationScale = paginationScale
    }

    /// Every check, by name (use as `@Test(arguments: BackendContract.Check.allCases)`).
    enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case metadataRoundtrip, readRanges, overwriteCreatesNewGeneration, oldGenerationReaderKeepsReading
        case updateMetadataMerge, preconditions, deleteAndNotFound
        case listDelimiterAndPrefixes, listInvalidNamesFiltered, listPagination, listCursorResume
        case listCloudStorageView, listOffsets, listTrailingDelimiter, listGlob, listWithMetadata
        case expectedMD5Mismatch, expectedSizeMismatch, beforeCommitRejects, bodyFailureMidway, unusualNames
        case policyNamesRoundTrip, listPagesThroughControlCharacterRuns, metadataKeysAreBytes
        case resumableLifecycle, resumableOffsetMismatch, resumableCancel, resumableSizeMismatch
        case resumableHandleBoundToExactName
        case changeRecording

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
        case .listCloudStorageView: try await listCloudStorageView()
        case .listOffsets: try await listOffsets()
        case .listTrailingDelimiter: try await listTrailingDelimiter()
        case .listGlob: try await listGlob()
        case .listWithMetadata: try await listWithMetadata()
        case .expectedMD5Mismatch: try await expectedMD5Mismatch()
        case .expectedSizeMismatch: try await expectedSizeMismatch()
        case .beforeCommitRejects: try await beforeCommitRejects()
        case .bodyFailureMidway: try await bodyFailureMidway()
        case .unusualNames: try await unusualNames()
        case .policyNamesRoundTrip: try await policyNamesRoundTrip()
        case .listPagesThroughControlCharacterRuns: try await listPagesThroughControlCharacterRuns()
        case .metadataKeysAreBytes: try await metadataKeysAreBytes()
        case .resumableHandleBoundToExactName: try await resumableHandleBoundToExactName()
        case .resumableLifecycle: try await resumableLifecycle()
        case .resumableOffsetMismatch: try await resumableOffsetMismatch()
        case .resumableCancel: try await resumableCancel()
        case .resumableSizeMismatch: try await resumableSizeMismatch()
        case .changeRecording: try await changeRecording()
        }
    }

    // MARK: - Helpers

    func path(_ name: String) throws -> ObjectPath { try ObjectPath(bucket: bucket, name: name) }

    @discardableResult
    func put(
        _ name: String, _ bytes: [UInt8], attributes: ObjectAttributes = ObjectAttributes(),
        options: WriteOptions = WriteOptions()
    ) async throws -> ObjectMetadata {
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
    func listAll(prefix: String, delimiter: String?, pageSize: Int) async throws -> (
        items: [String], prefixes: [String], order: [String]
    ) {
        var items = [String](), prefixes = [String](), order = [String]()
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await backend.list(
                ListRequest(
                    bucket: bucket, prefix: prefix, delimiter: delimiter,
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
}

/// Captures what `beforeCommit` saw.
final class SeenMetadata: Sendable {
    private let stored = Mutex<ObjectMetadata?>(nil)
    var value: ObjectMetadata? { stored.withLock { $0 } }
    func set(_ metadata: ObjectMetadata) { stored.withLock { $0 = metadata } }
}
