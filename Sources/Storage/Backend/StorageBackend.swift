public import PortcullisCore

/// One bucket's storage: the small core every backend (embedded, GCS, S3) implements.
///
/// Contracts shared by every requirement:
/// - Names arrive validated (`ObjectPath`); a backend treats them as opaque keys, never as file paths.
/// - Errors are `StorageError`; "no such object" is always `.notFound`, a failed precondition always
///   `.preconditionFailed`, an unreachable upstream `.unavailable`. Nothing else is thrown.
/// - Authorization has already happened: backends do not know about principals or rules.
/// - Cancellation: if the calling task is cancelled, a backend stops early and leaves no partial object;
///   a write that did not return its metadata did not happen.
public protocol StorageBackend: Sendable {
    /// Metadata of the current generation of `object`. Throws `.notFound`.
    func metadata(of object: ObjectPath) async throws(StorageError) -> ObjectMetadata

    /// Opens the current generation for reading. `range` is resolved against that generation's size:
    /// unsatisfiable → `.rangeNotSatisfiable(size:)`, except `bytes=0-` / `bytes=0-N` on a zero-length object,
    /// which returns the whole (empty) object with `range == nil` (the JS SDK treats 416 as an error). The
    /// returned body stays readable even if the object is overwritten or deleted meanwhile (readers of an old
    /// generation keep it). Throws `.notFound`.
    func read(_ object: ObjectPath, range: ByteRangeSpec?) async throws(StorageError) -> ObjectRead

    /// One page of the bucket's names under `request.prefix`; see `ListRequest` for ordering and filtering.
    /// Reading pages is consistent per page (one snapshot), not across pages: names written behind the cursor
    /// are not seen, names written ahead of it are. Errors: `.invalidArgument` for a cursor this backend did
    /// not produce for this prefix, or `maxResults` outside 1…1000; `.bucketNotFound` for another bucket.
    func list(_ request: ListRequest) async throws(StorageError) -> ListPage

    /// Writes a new generation from `body` (pulled to its end), computing MD5 and CRC32C as bytes pass.
    /// Atomic: readers see the old generation until the new one is complete and committed, then only the new
    /// one. Checks `options.preconditions` against the generation being replaced at commit time, after
    /// `options.beforeCommit` (never before it, and never before the body is in: a caller the rules refuse
    /// must not learn whether they held — the service fails fast itself once the caller is allowed).
    func write(
        _ object: ObjectPath, body: any ByteStream, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata

    /// Applies `patch` atomically (`MetadataPatch.applied(to:now:)`): bumps metageneration and `updated`.
    func updateMetadata(
        _ object: ObjectPath, patch: MetadataPatch,
        preconditions: Preconditions
    ) async throws(StorageError) -> ObjectMetadata

    /// Removes the object. Throws `.notFound` if absent; open readers keep their bytes.
    func delete(_ object: ObjectPath, preconditions: Preconditions) async throws(StorageError)

    /// Whether the backend can serve requests now (`/readyz`); cheap, may use cached state.
    func isReady() async -> Bool
}

/// A backend whose whole-object read is a local open — one index row and a file descriptor, nothing sent
/// anywhere — so a reader may open first and decide after (saving a lookup), dropping the opened bytes unsent
/// when access is refused. Discovered once, at start-up, like the other optional abilities.
public protocol LocalReads: StorageBackend {}

/// Reads a backend answers on the calling thread, without a hop to a blocking lane, when the caller holds an
/// HTTP event loop's permit that covers that thread (the one bounded exception to never blocking a loop: a point lookup and a local
/// open). Same contracts as `metadata(of:)` and `read(_:range:)`; without a usable permit they behave exactly
/// like them.
public protocol InPlaceReads: LocalReads {
    func metadata(of object: ObjectPath, inPlace permit: (any InPlaceLookupPermit)?) async throws(StorageError)
        -> ObjectMetadata
    func read(_ object: ObjectPath, range: ByteRangeSpec?, inPlace permit: (any InPlaceLookupPermit)?)
        async throws(StorageError) -> ObjectRead
}

/// Resumable-upload staging: bytes accumulate under an opaque handle, possibly across many processes (the
/// handle is sealed into the client's upload URL, so every instance sharing the backend can continue it).
public protocol ResumableStaging: Sendable {
    /// Opens a staging area for `object`; returns a handle string the backend understands (an embedded
    /// staging id, a GCS session URI, an S3 upload id plus context).
    func startUpload(
        _ object: ObjectPath, attributes: ObjectAttributes,
        declaredSize: Int64?
    ) async throws(StorageError) -> String

    /// Appends a chunk that must begin at exactly `offset` (else `.offsetMismatch(current:)`, nothing stored).
    /// A chunk is stored whole or not at all. Returns the new staged size.
    /// Errors: `.notFound` (unknown or expired handle, or a handle of another object), `.invalidArgument`
    /// (the upload was finalized or cancelled), `.sizeMismatch` (the chunk runs past the declared size),
    /// `.unavailable` (the backend's staging space is full; retry later), `.bodyFailed`.
    func appendChunk(
        _ handle: String, object: ObjectPath, offset: Int64,
        body: any ByteStream
    ) async throws(StorageError) -> Int64

    /// Bytes persisted so far (for a finalized upload: its final size). Throws `.notFound` for an unknown or
    /// expired handle, `.invalidArgument` for a cancelled one.
    func stagedSize(_ handle: String, object: ObjectPath) async throws(StorageError) -> Int64

    /// Commits the staged bytes as the new generation of `object` (same atomicity as `write`), after calling
    /// `options.beforeCommit`. The staging area is released on success. A staged size different from the
    /// declared one (or `options.expectedSize`) is `.sizeMismatch`; a finalized or cancelled upload is
    /// `.invalidArgument`. Any failure leaves the upload active with its bytes, so finalize may be retried.
    func finalizeUpload(
        _ handle: String, object: ObjectPath, attributes: ObjectAttributes,
        options: WriteOptions
    ) async throws(StorageError) -> ObjectMetadata

    /// Discards the staged bytes. Idempotent for an active or already cancelled upload; a no-op for a
    /// finalized one (the object stays). Throws `.notFound` for an unknown or expired handle.
    func cancelUpload(_ handle: String, object: ObjectPath) async throws(StorageError)

    /// Where the upload stands, for the protocol's `query` command and for answering a repeated `finalize` or
    /// a chunk after `cancel`. Throws `.notFound` for an unknown or expired handle. The default
    /// implementation reports `.active(stagedSize:)` from `stagedSize`, for backends that cannot tell more.
    func uploadState(_ handle: String, object: ObjectPath) async throws(StorageError) -> UploadState
}

extension ResumableStaging {
    public func uploadState(_ handle: String, object: ObjectPath) async throws(StorageError) -> UploadState {
        .active(stagedSize: try await stagedSize(handle, object: object))
    }
}

/// The lifecycle of one resumable upload.
public enum UploadState: Sendable, Equatable {
    /// Accepting chunks; `stagedSize` bytes are durably stored.
    case active(stagedSize: Int64)
    /// Finalized: the object was committed as `generation` with `size` bytes. Further chunks are refused.
    case finalized(size: Int64, generation: Int64)
    /// Cancelled by the client; chunks and finalize are refused.
    case cancelled
}

extension UploadState {
    /// What `ResumableStaging.stagedSize` answers in this state, for backends that derive it from `uploadState`:
    /// the bytes so far (or the final size); a cancelled upload is `.invalidArgument`.
    public func stagedSize() throws(StorageError) -> Int64 {
        switch self {
        case .active(let size): return size
        case .finalized(let size, _): return size
        case .cancelled: throw .invalidArgument("The upload was cancelled.")
        }
    }
}

/// What `read` opened: the generation's metadata, the resolved range, and its bytes.
public struct ObjectRead: Sendable {
    public let metadata: ObjectMetadata
    /// nil = the whole object.
    public let range: ResolvedRange?
    public let body: ObjectBody

    public init(metadata: ObjectMetadata, range: ResolvedRange?, body: ObjectBody) {
        self.metadata = metadata
        self.range = range
        self.body = body
    }
}

/// Object bytes: a file region (embedded backend, sent with `sendfile`), bytes already in memory (a small
/// embedded object its inline reader holds, see `IndexRowCache`), or a stream (upstream backends).
public enum ObjectBody: Sendable {
    case file(FileRegion)
    case bytes([UInt8])
    case stream(any ByteStream)

    /// Releases the underlying resource early (a 304 answer, a denied request).
    public func discard() {
        if case .stream(let stream) = self { stream.cancel() }
    }
}

/// One list page request (the v0 list, and the Cloud Storage JSON API's `objects.list`).
///
/// Ordering and filtering contract: items (names with no delimiter after the prefix) and prefixes (the name up
/// to and including the first delimiter after the prefix) form ONE stream sorted by UTF-8 byte order. Only
/// names in `[startOffset, endOffset)` take part, and with `matchGlob` only names it matches; a prefix is
/// listed when at least one such name lies under it. In the Firebase view (`firebaseView`, what v0 lists),
/// names that Firebase considers invalid — after the prefix, an empty segment (`//`) or a trailing `/` — are
/// dropped, and a prefix is dropped when it would contain an empty segment; the Cloud Storage view shows every
/// name. Dropping happens before counting. A page holds at most `maxResults` entries (items plus prefixes); a
/// prefix appears once in the whole listing. With `includeTrailingDelimiter`, an object named exactly like a
/// listed prefix (`dir/`) is also an item, listed with its prefix and not counted on its own.
public struct ListRequest: Sendable, Equatable {
    public var bucket: String
    /// Any text; v0 sends empty or a folder ending in `/`.
    public var prefix: String
    /// Any non-empty text (v0: `"/"`), or nil for a flat listing.
    public var delimiter: String?
    public var maxResults: Int
    /// The backend's own cursor from the previous page's `nextCursor`, already unsealed by the service.
    public var cursor: String?
    /// Only names ≥ this (byte order).
    public var startOffset: String?
    /// Only names < this (byte order).
    public var endOffset: String?
    public var includeTrailingDelimiter: Bool
    public var matchGlob: NameGlob?
    /// Hide the names the Firebase SDKs cannot address (v0); false shows every name (the JSON API).
    public var firebaseView: Bool
    /// Fill `ListPage.objects` with each item's metadata.
    public var includeMetadata: Bool

    public init(
        bucket: String, prefix: String, delimiter: String?, maxResults: Int, cursor: String?,
        startOffset: String? = nil, endOffset: String? = nil, includeTrailingDelimiter: Bool = false,
        matchGlob: NameGlob? = nil, firebaseView: Bool = true, includeMetadata: Bool = false
    ) {
        self.bucket = bucket
        self.prefix = prefix
        self.delimiter = delimiter.flatMap { $0.isEmpty ? nil : $0 }
        self.maxResults = maxResults
        self.cursor = cursor
        self.startOffset = startOffset.flatMap { $0.isEmpty ? nil : $0 }
        self.endOffset = endOffset.flatMap { $0.isEmpty ? nil : $0 }
        self.includeTrailingDelimiter = includeTrailingDelimiter
        self.matchGlob = matchGlob
        self.firebaseView = firebaseView
        self.includeMetadata = includeMetadata
    }

    /// Every text field compared by bytes.
    public static func == (a: ListRequest, b: ListRequest) -> Bool {
        a.maxResults == b.maxResults && a.bucket.bytesEqual(b.bucket) && a.prefix.bytesEqual(b.prefix)
            && a.delimiter.bytesEqual(b.delimiter) && a.cursor.bytesEqual(b.cursor)
    }
}

public struct ListPage: Sendable, Equatable {
    public var items: [String]
    public var prefixes: [String]
    /// Present only when more entries follow; opaque to everyone but the backend.
    public var nextCursor: String?
    /// With `ListRequest.includeMetadata`: each item's metadata, in the order of `items` (an item that vanished
    /// between the listing and its lookup is dropped from both). Empty otherwise.
    public var objects: [ObjectMetadata]

    public init(items: [String], prefixes: [String], nextCursor: String?, objects: [ObjectMetadata] = []) {
        self.items = items
        self.prefixes = prefixes
        self.nextCursor = nextCursor
        self.objects = objects
    }

    /// Names and cursor compared by bytes.
    public static func == (a: ListPage, b: ListPage) -> Bool {
        a.items.bytesEqual(b.items) && a.prefixes.bytesEqual(b.prefixes) && a.nextCursor.bytesEqual(b.nextCursor)
    }
}

/// How a write must behave beyond its bytes.
public struct WriteOptions: Sendable {
    public var preconditions: Preconditions
    /// A client-declared MD5 (base64); a mismatch is `.checksumMismatch` and nothing is committed.
    public var expectedMD5: String?
    /// A client-declared CRC32C (base64 of the big-endian value, as Cloud Storage writes it); same contract.
    public var expectedCRC32C: String?
    /// The declared total size; a different byte count is `.sizeMismatch` and nothing is committed.
    public var expectedSize: Int64?
    /// Called exactly once after every byte is in and checksummed, before the new generation becomes visible,
    /// with the metadata it would have. Throwing aborts the write (the error is rethrown as `.rejected`).
    /// This is where rules judge `request.resource` with the true size and hashes. The preconditions are
    /// checked after it.
    public var beforeCommit: (@Sendable (ObjectMetadata) async throws -> Void)?
    /// Record the commit's change events in the same transaction (backends that are a `ChangeOutbox`; others
    /// ignore it).
    public var changes: ChangeRecorder?

    public init(
        preconditions: Preconditions = .none, expectedMD5: String? = nil, expectedCRC32C: String? = nil,
        expectedSize: Int64? = nil, beforeCommit: (@Sendable (ObjectMetadata) async throws -> Void)? = nil,
        changes: ChangeRecorder? = nil
    ) {
        self.preconditions = preconditions
        self.expectedMD5 = expectedMD5
        self.expectedCRC32C = expectedCRC32C
        self.expectedSize = expectedSize
        self.beforeCommit = beforeCommit
        self.changes = changes
    }

    /// Checks what the client declared against what the bytes turned out to be — every backend calls this once
    /// all bytes are in, before anything becomes visible. Digests are compared as bytes of their base64 text.
    public func verify(size: Int64, md5Base64: String, crc32cBase64: String) throws(StorageError) {
        if let expected = expectedSize, expected != size { throw .sizeMismatch(expected: expected, actual: size) }
        if let expected = expectedMD5, !expected.utf8.elementsEqual(md5Base64.utf8) {
            throw .checksumMismatch(.md5, expected: expected, actual: md5Base64)
        }
        if let expected = expectedCRC32C, !expected.utf8.elementsEqual(crc32cBase64.utf8) {
            throw .checksumMismatch(.crc32c, expected: expected, actual: crc32cBase64)
        }
    }
}

/// Which declared digest of an upload did not match its bytes.
public enum DeclaredChecksum: String, Sendable {
    case md5 = "MD5"
    case crc32c = "CRC32C"
}

/// Every way a backend call fails. The Gateway maps these to v0 errors in one place.
public enum StorageError: Error, Sendable, CustomStringConvertible {
    case notFound
    case bucketNotFound(String)
    case preconditionFailed
    case rangeNotSatisfiable(size: Int64)
    case checksumMismatch(DeclaredChecksum, expected: String, actual: String)
    case sizeMismatch(expected: Int64, actual: Int64)
    /// A resumable chunk did not start at the staged size.
    case offsetMismatch(current: Int64)
    /// The body stream failed (client gone, limit exceeded, timeout); nothing was committed.
    case bodyFailed(any Error)
    /// `beforeCommit` refused the write.
    case rejected(any Error)
    /// The backend cannot be reached or asked us to back off; `retryAfter` in seconds.
    case unavailable(reason: String, retryAfter: Int?)
    case timedOut(String)
    /// The upstream refused our credentials (a configuration problem, not the caller's).
    case upstreamDenied(String)
    case invalidArgument(String)
    /// The request conflicts with what exists (a bucket created twice, a bucket deleted while not empty).
    case conflict(String)
    case internalError(String)

    public var description: String {
        switch self {
        case .notFound: "object not found"
        case .bucketNotFound(let b): "bucket \(b) not found"
        case .preconditionFailed: "precondition failed"
        case .rangeNotSatisfiable(let size): "range not satisfiable for an object of \(size) bytes"
        case .checksumMismatch(let kind, let e, let a): "\(kind.rawValue) mismatch: declared \(e), computed \(a)"
        case .sizeMismatch(let e, let a): "size mismatch: declared \(e) bytes, received \(a)"
        case .offsetMismatch(let current): "upload offset mismatch; \(current) bytes are staged"
        case .bodyFailed(let error): "request body failed: \(error)"
        case .rejected(let error): "write rejected: \(error)"
        case .unavailable(let reason, _): "storage unavailable: \(reason)"
        case .timedOut(let what): "storage timed out: \(what)"
        case .upstreamDenied(let what): "upstream denied access: \(what)"
        case .invalidArgument(let what), .conflict(let what): what
        case .internalError(let what): "internal storage error: \(what)"
        }
    }
}
